/**
 * Image normalisation with sharp: every uploaded image is decoded and re-encoded, so what is
 * stored is a clean file of known size whatever the client sent (decisions §4).
 */
import { TRPCError } from '@trpc/server'
import sharp, { type Metadata, type OutputInfo } from 'sharp'
import { blurhashOf } from './blurhash.js'

// Parallelism comes from the media queue (one image per slot, slots ≈ cores - 1): libvips
// spreading each image over every core as well would take the core that logins and requests need.
// Every upload is a new input, so libvips' operation cache would only hold memory.
sharp.concurrency(1)
sharp.cache(false)

/** Largest still image decoded (per frame): 50 megapixels, far above any phone camera's output. */
export const MAX_IMAGE_PIXELS = 50_000_000
/** Largest animation decoded, all frames together. */
export const MAX_ANIMATION_PIXELS = 100_000_000
/** Most frames in an animation: each is decoded and re-encoded, so a long one costs seconds of CPU even when small. */
export const MAX_FRAMES = 500
/** Wall-clock budget of one image's decode and encode, a last guard behind the pixel and frame limits. */
export const PROCESS_TIMEOUT_SECONDS = 20

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif'

export interface ImageOptions {
  /** Longest side of the result; smaller images are never enlarged. */
  maxSide: number
  /** Crop to a centred square and keep only the first frame (avatars). */
  square?: boolean
}

export interface ProcessedImage {
  data: Buffer
  format: ImageFormat
  mime: string
  ext: 'jpg' | 'png' | 'webp' | 'gif'
  width: number
  /** Height of one frame. */
  height: number
  /** Frames kept (1 for a still image). */
  pages: number
  /** The BlurHash of the stored result (its first frame). */
  blurhash: string
}

const OUTPUT: Record<ImageFormat, { mime: string; ext: ProcessedImage['ext'] }> = {
  jpeg: { mime: 'image/jpeg', ext: 'jpg' },
  png: { mime: 'image/png', ext: 'png' },
  webp: { mime: 'image/webp', ext: 'webp' },
  gif: { mime: 'image/gif', ext: 'gif' },
}

const unreadable = () => new TRPCError({ code: 'BAD_REQUEST', message: 'The file could not be read as an image' })

/**
 * Reads the header only (no pixels are decoded) and refuses images whose dimensions would make
 * decoding expensive, so a small file that claims huge dimensions (a decompression bomb) costs nothing.
 */
export async function inspectImage(input: Buffer, expected: ImageFormat) {
  let meta: Metadata
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata()
  } catch {
    throw unreadable()
  }
  if (meta.format !== expected || !meta.width || !meta.height) throw unreadable()
  const frameHeight = meta.pageHeight ?? meta.height
  const pages = meta.pages ?? 1
  const pixels = meta.width * frameHeight
  if (pixels > MAX_IMAGE_PIXELS) {
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message: `Image is too large: ${meta.width}×${frameHeight} pixels; at most ${MAX_IMAGE_PIXELS / 1_000_000} megapixels are accepted`,
    })
  }
  if (pages > 1 && pixels * pages > MAX_ANIMATION_PIXELS) {
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message: `Animation is too large: ${pages} frames of ${meta.width}×${frameHeight} pixels; at most ${MAX_ANIMATION_PIXELS / 1_000_000} megapixels in all are accepted`,
    })
  }
  if (pages > MAX_FRAMES) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `Animation is too long: ${pages} frames; at most ${MAX_FRAMES} are accepted` })
  }
  return { width: meta.width, height: frameHeight, pages, autoOrient: meta.autoOrient }
}

/**
 * Decodes, orients (EXIF orientation applied), resizes and re-encodes an image. Nothing of the
 * original's metadata (EXIF, GPS, XMP, IPTC, ICC profile) survives: sharp writes none unless asked,
 * and colours are converted to sRGB. Animated GIF and WebP keep their frames, delays and loop count.
 */
export async function processImage(input: Buffer, format: ImageFormat, options: ImageOptions): Promise<ProcessedImage> {
  const header = await inspectImage(input, format)
  const animated = header.pages > 1 && !options.square
  let image = sharp(input, {
    animated,
    limitInputPixels: animated ? MAX_ANIMATION_PIXELS : MAX_IMAGE_PIXELS,
    // Phone JPEGs often carry small encoder warnings; only real decode errors refuse the file.
    failOn: 'error',
  })
  // Orientation lives in EXIF, which animations do not carry; rotating frames of an animation is not supported.
  if (!animated) image = image.rotate()
  if (options.square) {
    const oriented = header.autoOrient ?? { width: header.width, height: header.height }
    const side = Math.min(options.maxSide, oriented.width, oriented.height)
    image = image.resize(side, side, { fit: 'cover', position: 'centre' })
  } else {
    image = image.resize(options.maxSide, options.maxSide, { fit: 'inside', withoutEnlargement: true })
  }
  // A still avatar cut from a GIF would lose colours as a GIF; it becomes a PNG instead.
  const output: ImageFormat = format === 'gif' && !animated ? (options.square ? 'png' : 'gif') : format
  switch (output) {
    case 'jpeg':
      image = image.jpeg({ quality: 82, mozjpeg: true })
      break
    case 'png':
      image = image.png({ compressionLevel: 9 })
      break
    case 'webp':
      image = image.webp({ quality: 82, effort: 4 })
      break
    case 'gif':
      image = image.gif({ effort: 7 })
      break
  }
  let encoded: { data: Buffer; info: OutputInfo }
  try {
    encoded = await image.timeout({ seconds: PROCESS_TIMEOUT_SECONDS }).toBuffer({ resolveWithObject: true })
  } catch (error) {
    if (/timeout/i.test((error as Error)?.message ?? '')) {
      throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `The image took more than ${PROCESS_TIMEOUT_SECONDS} s to process; send a smaller one` })
    }
    throw unreadable()
  }
  const { data, info } = encoded
  // From the result, so the placeholder matches what is served (upright, cropped).
  const blurhash = await blurhashOf(data)
  return { data, format: output, ...OUTPUT[output], width: info.width, height: info.pageHeight ?? info.height, pages: info.pages ?? 1, blurhash }
}

/**
 * A video's poster from its first frame (a lossless PNG from ffmpeg): encoded like an uploaded
 * JPEG (longest side at most `maxSide`, mozjpeg quality 82, no metadata), with its BlurHash.
 */
export async function encodePoster(frame: Buffer, maxSide: number): Promise<ProcessedImage> {
  const { data, info } = await sharp(frame, { failOn: 'error' })
    .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 82, mozjpeg: true })
    .timeout({ seconds: PROCESS_TIMEOUT_SECONDS })
    .toBuffer({ resolveWithObject: true })
  return { data, format: 'jpeg', ...OUTPUT.jpeg, width: info.width, height: info.height, pages: 1, blurhash: await blurhashOf(data) }
}
