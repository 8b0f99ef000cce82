/**
 * The photo effects of `GET /api/imageFx`, by name (their numbers are the order of IMAGE_EFFECTS in
 * src/shared/schemas/imaging.ts). Colour effects work on the RGB channels and leave transparency
 * as it was; geometric ones move every channel together.
 */
import type { ImageEffectName } from '../../../shared/schemas/imaging.js'
import { filled, stage, toRgb, type RawImage } from './pixels.js'

type Rgb = [number, number, number]
type Effect = (image: RawImage) => Promise<RawImage>

const grey = async (image: RawImage) => toRgb(await stage(image, (p) => p.grayscale()))

/** Grey levels mapped onto the line from `dark` (black) to `light` (white). */
const duotone = (dark: Rgb, light: Rgb): Effect => async (image) =>
  stage(await grey(image), (p) => p.linear(dark.map((d, i) => (light[i] - d) / 255), dark))

const sepia: Effect = (image) =>
  stage(image, (p) => p.recomb([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]))

/** A radial shade from clear at the centre to 75% black in the corners, drawn over the image. */
const vignette: Effect = async (image) => {
  const { width, height } = image.info
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><radialGradient id="v" cx="50%" cy="50%" r="71%"><stop offset="45%" stop-color="#000" stop-opacity="0"/><stop offset="100%" stop-color="#000" stop-opacity="0.75"/></radialGradient></defs><rect width="100%" height="100%" fill="url(#v)"/></svg>`
  const shaded = await stage(image, (p) => p.composite([{ input: Buffer.from(svg), blend: 'over' }]))
  return shaded.info.channels === 4 ? stage(shaded, (p) => p.removeAlpha()) : shaded
}

const edges = async (image: RawImage) =>
  toRgb(await stage(await stage(image, (p) => p.grayscale()), (p) => p.convolve({ width: 3, height: 3, kernel: [-1, -1, -1, -1, 8, -1, -1, -1, -1] })))

export const EFFECTS: Record<ImageEffectName, Effect> = {
  grayscale: grey,
  sepia,
  invert: (image) => stage(image, (p) => p.negate({ alpha: false })),
  blur: (image) => stage(image, (p) => p.blur(Math.max(2, Math.min(image.info.width, image.info.height) / 50))),
  sharpen: (image) => stage(image, (p) => p.sharpen({ sigma: 1.5, m1: 1, m2: 3 })),
  // Weights sum to 0 around a grey offset: flat areas are mid grey, edges light or dark by direction.
  emboss: async (image) =>
    toRgb(await stage(await stage(image, (p) => p.grayscale()), (p) => p.convolve({ width: 3, height: 3, kernel: [-2, -1, 0, -1, 0, 1, 0, 1, 2], offset: 128 }))),
  edge: edges,
  pixelate: async (image) => {
    const { width, height } = image.info
    const block = Math.max(2, Math.ceil(Math.max(width, height) / 64))
    const small = await stage(image, (p) => p.resize(Math.max(1, Math.round(width / block)), Math.max(1, Math.round(height / block)), { fit: 'fill' }))
    return stage(small, (p) => p.resize(width, height, { fit: 'fill', kernel: 'nearest' }))
  },
  // The top two bits of each channel, raised to the middle of their band: 32, 96, 160, 224.
  posterize: async (image) => stage(await stage(image, (p) => p.boolean(filled(image, 0xc0).data, 'and', { raw: image.info })), (p) => p.linear(1, 32)),
  threshold: async (image) => toRgb(await stage(image, (p) => p.threshold(128))),
  duotone: duotone([20, 30, 90], [120, 230, 255]),
  'duotone-sunset': duotone([60, 20, 90], [255, 170, 60]),
  'duotone-mint': duotone([20, 60, 40], [190, 255, 210]),
  vignette,
  tint: (image) => stage(image, (p) => p.tint({ r: 255, g: 150, b: 60 })),
  brighten: (image) => stage(image, (p) => p.modulate({ brightness: 1.3 })),
  darken: (image) => stage(image, (p) => p.modulate({ brightness: 0.7 })),
  saturate: (image) => stage(image, (p) => p.modulate({ saturation: 1.8 })),
  desaturate: (image) => stage(image, (p) => p.modulate({ saturation: 0.4 })),
  contrast: (image) => stage(image, (p) => p.linear(1.5, -64)),
  flip: (image) => stage(image, (p) => p.flip()),
  mirror: (image) => stage(image, (p) => p.flop()),
  rotate: (image) => stage(image, (p) => p.rotate(90)),
  // v < 128 stays; v >= 128 becomes 255 - v, which is v XOR 0xFF: the top bit, spread to a whole byte, is the XOR mask.
  solarize: async (image) => {
    const top = await stage(image, (p) => p.boolean(filled(image, 0x80).data, 'and', { raw: image.info }))
    const mask = await stage(top, (p) => p.linear(255 / 128, 0))
    return stage(image, (p) => p.boolean(mask.data, 'eor', { raw: mask.info }))
  },
  'hue-rotate': (image) => stage(image, (p) => p.modulate({ hue: 180 })),
  warm: (image) => stage(image, (p) => p.recomb([[1.1, 0, 0], [0, 1, 0], [0, 0, 0.85]])),
  cool: (image) => stage(image, (p) => p.recomb([[0.9, 0, 0], [0, 1, 0], [0, 0, 1.12]])),
  normalize: (image) => stage(image, (p) => p.normalise()),
  sketch: async (image) => stage(await edges(image), (p) => p.negate()),
  vintage: async (image) => vignette(await stage(await sepia(image), (p) => p.linear(0.85, 20))),
}

/** Effects that move pixels rather than change their colour: they carry the alpha channel along. */
const GEOMETRIC = new Set<ImageEffectName>(['flip', 'mirror', 'rotate', 'pixelate', 'blur'])

/** Applies `name` to `image`; transparency survives every effect. */
export async function applyEffect(image: RawImage, name: ImageEffectName): Promise<RawImage> {
  if (image.info.channels !== 4 || GEOMETRIC.has(name)) return EFFECTS[name](image)
  const alpha = await stage(image, (p) => p.extractChannel(3))
  const rgb = await stage(image, (p) => p.removeAlpha())
  const done = await EFFECTS[name](rgb)
  return stage(done, (p) => p.joinChannel(alpha.data, { raw: alpha.info }))
}
