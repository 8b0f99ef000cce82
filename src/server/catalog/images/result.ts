/**
 * What comes back from an image provider is never passed on as it came: the bytes are sniffed
 * (file-type, not the declared type), the header checked as uploads are (format, size, no
 * decompression bomb), and the pixels decoded and re-encoded with sharp in the media queue. Bytes
 * that are not an image fail the call (the next provider is tried, then 502).
 */
import { createHash } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import sharp from 'sharp'
import { inspectImage, MAX_IMAGE_PIXELS, PROCESS_TIMEOUT_SECONDS, type ImageFormat } from '../../media/images.js'
import { mediaQueue } from '../../media/queue.js'
import { sniffMedia } from '../../media/sniff.js'
import { UpstreamError } from '../../providers/errors.js'
import type { Attempt } from '../../providers/layer.js'
import type { Services } from '../../services.js'
import { storeGenerated, type GeneratedKind } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'
import { decode, encode, type EncodedImage } from '../imaging/pixels.js'

export interface CheckedImage {
  bytes: Buffer
  format: ImageFormat
}

/** Sniffs and inspects an upstream's bytes; anything but a readable JPEG, PNG, WebP or GIF of a decodable size fails the call. */
export async function checkUpstreamImage(call: Attempt, bytes: Buffer): Promise<CheckedImage> {
  if (bytes.length === 0) throw new UpstreamError('protocol', `${call.label} answered an empty image`)
  const media = await sniffMedia(bytes.subarray(0, 4100))
  if (media.kind !== 'image') {
    throw new UpstreamError('protocol', `${call.label} answered bytes that are not an image Plaza reads (${media.mime ?? 'type not recognised'})`)
  }
  try {
    await inspectImage(bytes, media.format)
  } catch (error) {
    throw new UpstreamError('protocol', `${call.label} answered an image Plaza will not decode: ${(error as Error).message}`)
  }
  return { bytes, format: media.format }
}

/** Decodes and re-encodes a checked image in the media queue: JPEG stays JPEG, anything else becomes PNG (transparency kept). */
export function reencode(env: NodeJS.ProcessEnv, image: CheckedImage): Promise<EncodedImage> {
  return mediaQueue(env).run(async () => encode(await decode(image.bytes), image.format))
}

/** An input image as PNG for a provider, fitted inside `maxSide` (never enlarged), in the media queue. */
export function preparePng(env: NodeJS.ProcessEnv, bytes: Buffer, maxSide: number): Promise<{ png: Buffer; width: number; height: number }> {
  return mediaQueue(env).run(async () => {
    try {
      const { data, info } = await sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS })
        .rotate()
        .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
        .timeout({ seconds: PROCESS_TIMEOUT_SECONDS })
        .png()
        .toBuffer({ resolveWithObject: true })
      return { png: data, width: info.width, height: info.height }
    } catch {
      throw new TRPCError({ code: 'BAD_REQUEST', message: 'url: the file could not be read as an image' })
    }
  })
}

/** Stores a finished image under `uploads/<kind>/` (named by its bytes' hash, so a repeat is one file) and describes it. */
export async function storeImage(services: Services, origin: string, kind: GeneratedKind, image: EncodedImage) {
  const stored = await storeGenerated(services, {
    kind,
    key: { sha256: createHash('sha256').update(image.data).digest('base64url') },
    ext: image.ext,
    mime: image.mime,
    render: async () => ({ body: image.data, width: image.width, height: image.height }),
  })
  return { url: uploadUrl(origin, stored.path), path: stored.path, width: stored.width ?? image.width, height: stored.height ?? image.height }
}
