/**
 * The image input of every image operation (decisions §6): an http(s) URL, fetched through the
 * fetch guard, or a file this server recorded (`uploads/...`, or its absolute URL on this server),
 * read from storage. Either way the bytes are sniffed and the header checked the way uploads are,
 * before any pixel is decoded.
 */
import { TRPCError } from '@trpc/server'
import { eq } from 'drizzle-orm'
import { uploads } from '../../db/schema.js'
import { errorCases, type ErrorCases } from '../../errors.js'
import { FETCH_ERRORS, guardedFetch } from '../../fetch-guard.js'
import { inspectImage, type ImageFormat } from '../../media/images.js'
import { sniffMedia } from '../../media/sniff.js'
import type { Services } from '../../services.js'
import { IMAGE_MAX_BYTES } from '../../uploads/pipeline.js'
import { SERVED_PATH_PATTERN } from '../../uploads/serve.js'

export interface SourceImage {
  bytes: Buffer
  format: ImageFormat
}

/** What checking an image's bytes (checkImage) can answer. */
export const IMAGE_FILE_ERRORS: ErrorCases = {
  400: 'The image is empty, or its dimensions are too large to decode',
  415: 'The file is not an image Plaza reads (JPEG, PNG, WebP or GIF)',
}

/** What reading an image input (readSourceImage) can answer: the fetch's refusals, and a file that is missing, too large or no image. */
export const IMAGE_SOURCE_ERRORS = errorCases(FETCH_ERRORS, IMAGE_FILE_ERRORS, {
  404: 'An `uploads/...` path (or this server\'s URL of one) names no file here',
  413: 'The image is larger than the operation takes',
})

const notFound = (field: string) => new TRPCError({ code: 'NOT_FOUND', message: `${field}: no such file on this server` })

/** The `uploads/...` key `value` names on this server, or null when it is a URL elsewhere. */
function localKey(value: string, origin: string): string | null {
  if (/^\/?uploads\//.test(value)) return value.replace(/^\//, '')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return null
  }
  // The `url` of a JSON answer points back here; reading it from storage saves a refused loopback fetch.
  return url.origin === new URL(origin).origin && url.pathname.startsWith('/uploads/') && !url.search ? url.pathname.slice(1) : null
}

/** Reads a recorded, unexpired file, as `/uploads` serves it: nothing else on disk is reachable. */
async function readRecorded(services: Services, key: string, field: string): Promise<Buffer> {
  if (!SERVED_PATH_PATTERN.test(`/${key}`)) throw notFound(field)
  const [row] = await services.db.select({ size: uploads.size, expiresAt: uploads.expiresAt }).from(uploads).where(eq(uploads.path, key)).limit(1)
  if (!row || (row.expiresAt !== null && row.expiresAt <= services.clock().getTime())) throw notFound(field)
  if (row.size > IMAGE_MAX_BYTES) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `${field}: the file is larger than ${IMAGE_MAX_BYTES / (1024 * 1024)} MiB` })
  const stream = await services.storage.get(key)
  if (!stream) throw notFound(field)
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Fetches or reads the image `value` names and checks it is one (JPEG, PNG, WebP, GIF) of a size that may be decoded. */
export async function readSourceImage(services: Services, value: string, field: string, origin: string): Promise<SourceImage> {
  const key = localKey(value, origin)
  const bytes = key
    ? await readRecorded(services, key, field)
    : (await guardedFetch(value, { field, allowPrivate: services.config.fetchAllowPrivate, maxBytes: IMAGE_MAX_BYTES })).bytes
  return checkImage(bytes, field)
}

/** Sniffs `bytes` (never trusting a declared type) and reads the header: not an image is 415, a decompression bomb 400. */
export async function checkImage(bytes: Buffer, field: string): Promise<SourceImage> {
  if (bytes.length === 0) throw new TRPCError({ code: 'BAD_REQUEST', message: `${field}: the file is empty` })
  const media = await sniffMedia(bytes.subarray(0, 4100))
  if (media.kind !== 'image') {
    throw new TRPCError({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: `${field}: not an image Plaza reads (JPEG, PNG, WebP or GIF); ${media.mime ? `this file is ${media.mime}` : 'its type was not recognised'}`,
    })
  }
  try {
    await inspectImage(bytes, media.format)
  } catch (error) {
    if (error instanceof TRPCError) throw new TRPCError({ code: error.code, message: `${field}: ${error.message}` })
    throw error
  }
  return { bytes, format: media.format }
}
