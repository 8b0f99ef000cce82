import sharp from 'sharp'

export const SNIPPET = `import { createServer } from 'node:http'

// Answers every request with a greeting
const server = createServer((req, res) => {
  res.end(JSON.stringify({ hello: 'world', n: 42 }))
})

server.listen(8080)`

export async function decode(png: Uint8Array) {
  const { data, info } = await sharp(Buffer.from(png)).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const pixel = (x: number, y: number) => {
    const i = (Math.floor(y) * info.width + Math.floor(x)) * 4
    return { r: data[i], g: data[i + 1], b: data[i + 2], a: data[i + 3] }
  }
  let sum = 0
  for (let i = 0; i < data.length; i += 4) sum += 0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]
  return { width: info.width, height: info.height, data, pixel, meanLuminance: sum / (data.length / 4) }
}

export function hex(color: string) {
  const n = parseInt(color.replace('#', '').padEnd(6, color.slice(-1)), 16)
  return { r: n >> 16, g: (n >> 8) & 255, b: n & 255 }
}

export function near(a: { r: number; g: number; b: number }, b: { r: number; g: number; b: number }, tolerance = 12) {
  return Math.abs(a.r - b.r) <= tolerance && Math.abs(a.g - b.g) <= tolerance && Math.abs(a.b - b.b) <= tolerance
}

type Decoded = Awaited<ReturnType<typeof decode>>

/**
 * Pixels of the box that are not a mix of `bg` and `fg` alone: what text drawn in one colour
 * (with anti-aliasing) never makes, and text in several colours does. A pixel counts when it is
 * more than `tolerance` levels off the line from `bg` to `fg`.
 */
export function offLinePixels(image: Decoded, bg: { r: number; g: number; b: number }, fg: { r: number; g: number; b: number }, box: { x: number; y: number; w: number; h: number }, tolerance = 40) {
  const d = [fg.r - bg.r, fg.g - bg.g, fg.b - bg.b]
  const len2 = d[0] ** 2 + d[1] ** 2 + d[2] ** 2
  let count = 0
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const p = image.pixel(x, y)
      const v = [p.r - bg.r, p.g - bg.g, p.b - bg.b]
      const t = Math.max(0, Math.min(1, (v[0] * d[0] + v[1] * d[1] + v[2] * d[2]) / len2))
      const off = Math.hypot(v[0] - t * d[0], v[1] - t * d[1], v[2] - t * d[2])
      if (off > tolerance) count++
    }
  }
  return count
}

/** True when two decoded images are not pixel for pixel the same. */
export function differs(a: Decoded, b: Decoded) {
  return a.width !== b.width || a.height !== b.height || Buffer.compare(a.data, b.data) !== 0
}
