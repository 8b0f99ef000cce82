/**
 * The BlurHash encoder (https://github.com/woltapp/blurhash/blob/master/Algorithm.md). Not the
 * `blurhash` package's `encode`: its quantisation scale is the largest *signed* AC coefficient
 * where the C, Swift and Kotlin encoders take the largest absolute one, so an image whose strongest
 * gradient is negative (dark on the left, or at the top) comes out with most of its contrast
 * clipped away. Where the largest coefficient is positive both give the same hash, and every
 * BlurHash decoder (the package's `decode` included) reads either.
 */

const BASE83 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~'

function encode83(value: number, length: number): string {
  let text = ''
  for (let i = 1; i <= length; i++) text += BASE83[Math.floor(value / 83 ** (length - i)) % 83]
  return text
}

function srgbToLinear(value: number): number {
  const v = value / 255
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
}

/** Every byte's linear value, computed once rather than once per pixel and component. */
const LINEAR = Float64Array.from({ length: 256 }, (_, value) => srgbToLinear(value))

function linearToSrgb(value: number): number {
  const v = Math.max(0, Math.min(1, value))
  return v <= 0.0031308 ? Math.trunc(v * 12.92 * 255 + 0.5) : Math.trunc((1.055 * v ** (1 / 2.4) - 0.055) * 255 + 0.5)
}

const signPow = (value: number, exp: number) => Math.sign(value) * Math.abs(value) ** exp

/** The BlurHash of RGBA `pixels` (alpha ignored) with `componentsX` × `componentsY` components (1 to 9 each). */
export function encodeBlurhash(pixels: Uint8Array, width: number, height: number, componentsX: number, componentsY: number): string {
  if (![componentsX, componentsY].every((n) => Number.isInteger(n) && n >= 1 && n <= 9)) throw new RangeError('BlurHash takes 1 to 9 components per axis')
  if (width < 1 || height < 1 || pixels.length !== width * height * 4) throw new RangeError('The pixels do not match width × height RGBA')
  const factors: Array<[number, number, number]> = []
  for (let j = 0; j < componentsY; j++) {
    for (let i = 0; i < componentsX; i++) {
      const normalisation = i === 0 && j === 0 ? 1 : 2
      let r = 0
      let g = 0
      let b = 0
      // x outer, y inner, and the basis multiplied in this order: the sums of the reference
      // TypeScript encoder exactly, so that both agree to the bit where they should.
      for (let x = 0; x < width; x++) {
        const basisX = normalisation * Math.cos((Math.PI * i * x) / width)
        for (let y = 0; y < height; y++) {
          const basis = basisX * Math.cos((Math.PI * j * y) / height)
          const at = 4 * (x + y * width)
          r += basis * LINEAR[pixels[at]]
          g += basis * LINEAR[pixels[at + 1]]
          b += basis * LINEAR[pixels[at + 2]]
        }
      }
      const scale = 1 / (width * height)
      factors.push([r * scale, g * scale, b * scale])
    }
  }
  const [dc, ...ac] = factors
  let hash = encode83(componentsX - 1 + (componentsY - 1) * 9, 1)
  let maximum = 1
  if (ac.length > 0) {
    const actual = Math.max(...ac.flat().map(Math.abs))
    const quantised = Math.max(0, Math.min(82, Math.floor(actual * 166 - 0.5)))
    maximum = (quantised + 1) / 166
    hash += encode83(quantised, 1)
  } else {
    hash += encode83(0, 1)
  }
  hash += encode83((linearToSrgb(dc[0]) << 16) + (linearToSrgb(dc[1]) << 8) + linearToSrgb(dc[2]), 4)
  for (const factor of ac) {
    const [qr, qg, qb] = factor.map((value) => Math.max(0, Math.min(18, Math.floor(signPow(value / maximum, 0.5) * 9 + 9.5))))
    hash += encode83(qr * 19 * 19 + qg * 19 + qb, 2)
  }
  return hash
}
