/**
 * The upload pipeline (decisions §4): sniff the type from the bytes, enforce the size limit while
 * reading, normalise images, store under an unguessable name and record the file, so that posts,
 * stories and avatars can reference it. The HTTP routes and the embedded CLI both call `saveUpload`.
 */
import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { Readable } from 'node:stream'
import { TRPCError } from '@trpc/server'
import { eq } from 'drizzle-orm'
import type { UploadResult } from '../../shared/types.js'
import { writeTransaction } from '../db/client.js'
import { uploads, users } from '../db/schema.js'
import { processImage } from '../media/images.js'
import { mediaQueue } from '../media/queue.js'
import { SNIFF_BYTES, sniffMedia } from '../media/sniff.js'
import { normaliseVideo } from '../media/video.js'
import type { Services } from '../services.js'

export type UploadKind = 'avatars' | 'posts' | 'stories' | 'comments'
/** Every folder under `uploads/`: user uploads plus generated files (code images, image operations' results). */
export type StoredKind = UploadKind | 'codeimages' | 'imagefx' | 'expand' | 'upscale' | 'carbon' | 'meme' | 'fakepost' | 'logo' | 'tts' | 'imagine' | 'toanime' | 'zombie' | 'removebg' | 'files'

export const MiB = 1024 * 1024
export const IMAGE_MAX_BYTES = 10 * MiB
export const VIDEO_MAX_BYTES = 50 * MiB
export const IMAGE_MAX_SIDE = 2048
export const AVATAR_SIDE = 512

/** Which uploads may be videos: stories, and posts (a carousel's items, issue 49). */
export function acceptsVideo(kind: UploadKind): boolean {
  return kind === 'stories' || kind === 'posts'
}

/** The largest upload of a kind: a video may be bigger than an image. */
export function maxUploadBytes(kind: UploadKind): number {
  return acceptsVideo(kind) ? VIDEO_MAX_BYTES : IMAGE_MAX_BYTES
}

/** 144 random bits, base64url: unguessable, and safe in a path and a URL as it is. */
export function newFileName(ext: string): string {
  return `${randomBytes(18).toString('base64url')}.${ext}`
}

export function uploadUrl(origin: string, path: string): string {
  return `${origin.replace(/\/+$/, '')}/${path}`
}

export type UploadSource = Readable | Buffer | AsyncIterable<Uint8Array>

export interface SaveUploadInput {
  userId: number
  kind: UploadKind
  source: UploadSource
  /** Base of the absolute `url` in the result (PLAZA_PUBLIC_URL or the request's origin). */
  origin: string
}

const tooLarge = (kind: UploadKind, what: 'image' | 'file') =>
  new TRPCError({
    code: 'PAYLOAD_TOO_LARGE',
    message:
      what === 'image' || !acceptsVideo(kind)
        ? `File is too large: images may be at most ${IMAGE_MAX_BYTES / MiB} MiB`
        : `File is too large: videos may be at most ${VIDEO_MAX_BYTES / MiB} MiB`,
  })

/** Yields the source's bytes, failing as soon as more than `limit` have arrived. */
async function* limitBytes(source: UploadSource, limit: number, onExceeded: () => Error): AsyncGenerator<Buffer> {
  let total = 0
  for await (const chunk of Buffer.isBuffer(source) ? [source] : source) {
    total += chunk.length
    if (total > limit) throw onExceeded()
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
  }
}

function unsupported(kind: UploadKind, mime: string | null): TRPCError {
  const accepted = acceptsVideo(kind) ? 'JPEG, PNG, WebP or GIF images and MP4, MOV or WebM video' : 'JPEG, PNG, WebP or GIF images'
  const seen = mime ? `this file is ${mime}` : 'its type was not recognised'
  return new TRPCError({ code: 'BAD_REQUEST', message: `Unsupported file type: ${kind} uploads accept ${accepted} (${seen})` })
}

/** Receives one upload end to end and returns where it is served; the avatar upload also becomes the user's avatar. */
export async function saveUpload(services: Services, input: SaveUploadInput): Promise<UploadResult> {
  const { kind } = input
  const queue = mediaQueue(services.config.env)
  const bytes = limitBytes(input.source, maxUploadBytes(kind), () => tooLarge(kind, 'file'))
  try {
    const head: Buffer[] = []
    let headSize = 0
    while (headSize < SNIFF_BYTES) {
      const next = await bytes.next()
      if (next.done) break
      head.push(next.value)
      headSize += next.value.length
    }
    if (headSize === 0) throw new TRPCError({ code: 'BAD_REQUEST', message: 'The file is empty' })
    const media = await sniffMedia(Buffer.concat(head))
    async function* everything() {
      yield* head
      yield* bytes
    }

    if (media.kind === 'image') {
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of everything()) {
        size += chunk.length
        if (size > IMAGE_MAX_BYTES) throw tooLarge(kind, 'image')
        chunks.push(chunk)
      }
      const square = kind === 'avatars'
      const image = await queue.run(() => processImage(Buffer.concat(chunks), media.format, { maxSide: square ? AVATAR_SIDE : IMAGE_MAX_SIDE, square }))
      const stored = await storeFile(services, {
        kind,
        userId: input.userId,
        body: image.data,
        ext: image.ext,
        mime: image.mime,
        width: image.width,
        height: image.height,
        blurhash: image.blurhash,
        origin: input.origin,
      })
      return { ...stored, width: image.width, height: image.height, blurhash: image.blurhash }
    }
    if (media.kind === 'video' && acceptsVideo(kind)) {
      // The size limit is enforced while the video streams to its temporary file.
      return await normaliseVideo(everything(), media.ext, { queue }, async ({ videoPath, width, height, poster }) => {
        const still = await storeFile(services, {
          kind,
          userId: input.userId,
          body: poster.data,
          ext: poster.ext,
          mime: poster.mime,
          width: poster.width,
          height: poster.height,
          blurhash: poster.blurhash,
          origin: input.origin,
        })
        // The video's row carries its poster's BlurHash and path, so lists answer both from this one row.
        const video = await storeFile(services, {
          kind,
          userId: input.userId,
          body: createReadStream(videoPath),
          ext: media.ext,
          mime: media.mime,
          width,
          height,
          blurhash: poster.blurhash,
          poster: still.path,
          origin: input.origin,
        })
        return { ...video, width, height, blurhash: poster.blurhash, poster_url: still.url, poster_path: still.path }
      })
    }
    throw unsupported(kind, media.mime)
  } finally {
    // Stops reading the source when we bail out early; the HTTP layer discards what is left of the request.
    await bytes.return(undefined)
  }
}

export interface StoreFileInput {
  kind: StoredKind
  /** Null for files not owned by a user (generated code images of an anonymous caller). */
  userId: number | null
  body: Readable | Buffer
  /** `svg` only for generated code images; uploads are always one of the raster or video formats. */
  ext: 'jpg' | 'png' | 'webp' | 'gif' | 'mp4' | 'webm' | 'svg' | 'wav' | 'mp3' | 'ogg' | 'aac' | 'flac'
  mime: string
  width?: number | null
  height?: number | null
  blurhash?: string | null
  /** A video's poster frame: the path of its own recorded upload. */
  poster?: string | null
  origin: string
}

/** Where a stored file is served. */
export interface StoredFile {
  url: string
  path: string
  filename: string
}

/**
 * Writes a finished file under a fresh name and records it in `uploads` (only recorded files are
 * served). An avatar also becomes the user's avatar in the same transaction. The file is staged,
 * then recorded, then moved into place: a crash between the steps leaves a staged file that the
 * start-up sweep commits (recorded) or removes (not recorded), never an unrecorded file.
 */
export async function storeFile(services: Services, input: StoreFileInput): Promise<StoredFile> {
  const filename = newFileName(input.ext)
  const path = `uploads/${input.kind}/${filename}`
  const staged = await services.storage.stage(path, input.body)
  try {
    await writeTransaction(services.db, async (tx) => {
      await tx.insert(uploads).values({
        userId: input.userId,
        kind: input.kind,
        path,
        mime: input.mime,
        size: staged.size,
        width: input.width ?? null,
        height: input.height ?? null,
        blurhash: input.blurhash ?? null,
        poster: input.poster ?? null,
        createdAt: services.clock().getTime(),
      })
      if (input.kind === 'avatars' && input.userId !== null) {
        // A new picture: the old one's description no longer fits it.
        await tx.update(users).set({ avatar: path, avatarAlt: '' }).where(eq(users.id, input.userId))
      }
    })
  } catch (error) {
    await staged.discard().catch(() => {})
    throw error
  }
  await staged.commit()
  return { url: uploadUrl(input.origin, path), path, filename }
}
