/**
 * Decoded images as raw pixels, and sharp run one operation per stage. sharp applies the
 * operations of one pipeline in its own fixed order, not in call order, so a multi-step effect
 * (grey, then colour mapping) is a chain of pipelines over raw buffers; raw stages cost no encoding.
 * Every stage runs on libuv's pool (never on the event loop) under a time limit.
 */
import { TRPCError } from '@trpc/server'
import sharp, { type Sharp } from 'sharp'
import type { ErrorCases } from '../../errors.js'
import { MAX_IMAGE_PIXELS, PROCESS_TIMEOUT_SECONDS, type ImageFormat } from '../../media/images.js'

/** What processing pixels can answer (ErrorCases in errors.ts). */
export const PIXEL_ERRORS: ErrorCases = {
  400: 'The file could not be read as an image',
  413: `The image took more than ${PROCESS_TIMEOUT_SECONDS} s to process`,
}

export interface RawImage {
  data: Buffer
  info: { width: number; height: number; channels: 1 | 2 | 3 | 4 }
}

const tooSlow = () => new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `The image took more than ${PROCESS_TIMEOUT_SECONDS} s to process; send a smaller one` })

async function run(pipeline: Sharp): Promise<RawImage> {
  try {
    const { data, info } = await pipeline.timeout({ seconds: PROCESS_TIMEOUT_SECONDS }).raw().toBuffer({ resolveWithObject: true })
    return { data, info: { width: info.width, height: info.height, channels: info.channels } }
  } catch (error) {
    if (/timeout/i.test((error as Error)?.message ?? '')) throw tooSlow()
    throw error
  }
}

/**
 * Decodes the first frame (an animation keeps only it), upright (EXIF orientation applied), in
 * sRGB: 3 channels, or 4 with transparency.
 */
export async function decode(bytes: Buffer): Promise<RawImage> {
  try {
    return await run(sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' }).rotate().toColourspace('srgb'))
  } catch (error) {
    if (error instanceof TRPCError) throw error
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'The file could not be read as an image' })
  }
}

/** One pipeline over `image`. */
export function stage(image: RawImage, build: (pipeline: Sharp) => Sharp): Promise<RawImage> {
  return run(build(sharp(image.data, { raw: image.info })))
}

/** Back to three channels after an operation that leaves one (greyscale). */
export async function toRgb(image: RawImage): Promise<RawImage> {
  return image.info.channels === 1 ? stage(image, (p) => p.toColourspace('srgb')) : image
}

/** A raw buffer the size of `image` filled with `byte`: the operand of per-channel bitwise stages. */
export function filled(image: RawImage, byte: number): RawImage {
  return { data: Buffer.alloc(image.data.length, byte), info: image.info }
}

export interface EncodedImage {
  data: Buffer
  mime: 'image/png' | 'image/jpeg'
  ext: 'png' | 'jpg'
  width: number
  height: number
}

/** JPEG in, JPEG out (quality 90: a photo as PNG would be several times larger); anything else becomes PNG, transparency kept. */
export async function encode(image: RawImage, inputFormat: ImageFormat): Promise<EncodedImage> {
  const jpeg = inputFormat === 'jpeg' && image.info.channels !== 2 && image.info.channels !== 4
  const pipeline = sharp(image.data, { raw: image.info }).timeout({ seconds: PROCESS_TIMEOUT_SECONDS })
  try {
    const data = await (jpeg ? pipeline.jpeg({ quality: 90, mozjpeg: true }) : pipeline.png({ compressionLevel: 6 })).toBuffer()
    return { data, mime: jpeg ? 'image/jpeg' : 'image/png', ext: jpeg ? 'jpg' : 'png', width: image.info.width, height: image.info.height }
  } catch (error) {
    if (/timeout/i.test((error as Error)?.message ?? '')) throw tooSlow()
    throw error
  }
}
