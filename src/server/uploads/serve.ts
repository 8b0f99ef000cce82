/**
 * Serves `/uploads/...`: only files recorded in the `uploads` table, by a path of one strict shape,
 * so nothing else on disk (the database, staged files, anything placed there by hand) is reachable,
 * and no generated file past its expiry. A name always holds the same content (random for uploads,
 * a hash of the request for generated files), so answers are cached forever and revalidated by ETag.
 * From an object store, the bytes are streamed through (`PLAZA_STORAGE_SERVE=proxy`, the default)
 * or the answer is a redirect to a short-lived signed URL (`redirect`, docs/storage.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { TRPCError } from '@trpc/server'
import { eq } from 'drizzle-orm'
import { uploads } from '../db/schema.js'
import { sendError } from '../http.js'
import type { Services } from '../services.js'
import type { ByteRange, StoredFile } from './storage.js'

/** The only request paths that can name a file; anything else (`..`, `%2e`, `\`, extra slashes) is a 404 before any lookup. */
export const SERVED_PATH_PATTERN = /^\/uploads\/(avatars|posts|stories|comments|codeimages|imagefx|expand|upscale|carbon|meme|fakepost|logo|tts|imagine|toanime|zombie|removebg|files)\/[A-Za-z0-9_-]{8,128}\.(jpg|png|webp|gif|mp4|webm|svg|wav|mp3|ogg|aac|flac)$/

const notFound = () => new TRPCError({ code: 'NOT_FOUND', message: 'File not found' })

function etagOf(file: StoredFile): string {
  return `"${file.size.toString(16)}-${Math.floor(file.modifiedAt.getTime()).toString(16)}"`
}

function isFresh(req: IncomingMessage, etag: string, modifiedAt: Date): boolean {
  const match = req.headers['if-none-match']
  if (match) return match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')
  const since = Date.parse(req.headers['if-modified-since'] ?? '')
  return !Number.isNaN(since) && Math.floor(modifiedAt.getTime() / 1000) <= Math.floor(since / 1000)
}

/** One `bytes=` range (multiple ranges are answered with the whole file); 'unsatisfiable' for a range past the end. */
function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!match || (match[1] === '' && match[2] === '')) return null
  if (match[1] === '') {
    const suffix = Number(match[2])
    if (suffix === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
  if (start >= size || end < start) return 'unsatisfiable'
  return { start, end }
}

/** Answers GET and HEAD for `pathname` (already below `/uploads`); errors are thrown for the envelope. */
export async function serveUpload(services: Services, req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
  const method = req.method ?? 'GET'
  if (method !== 'GET' && method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD')
    throw new TRPCError({ code: 'METHOD_NOT_SUPPORTED', message: `Method ${method} is not allowed here; use GET or HEAD` })
  }
  if (!SERVED_PATH_PATTERN.test(pathname)) throw notFound()
  const key = pathname.slice(1)
  const [row] = await services.db.select({ mime: uploads.mime, expiresAt: uploads.expiresAt }).from(uploads).where(eq(uploads.path, key)).limit(1)
  // An expired generated file is gone for clients at once, whenever the sweep gets to deleting it.
  if (!row || (row.expiresAt !== null && row.expiresAt <= services.clock().getTime())) throw notFound()
  if (services.storage.redirectFor) {
    // The bucket serves the bytes (ranges, ETags) itself; the redirect may be reused while its URL is valid.
    const redirect = await services.storage.redirectFor(key, row.mime)
    res.writeHead(302, { location: redirect.url, 'cache-control': `private, max-age=${redirect.maxAgeSeconds}`, 'content-length': 0 })
    res.end()
    return
  }
  const file = await services.storage.stat(key)
  if (!file) throw notFound()

  const etag = etagOf(file)
  const headers: Record<string, string | number> = {
    'content-type': row.mime,
    'cache-control': 'public, max-age=31536000, immutable',
    etag,
    'last-modified': file.modifiedAt.toUTCString(),
    'accept-ranges': 'bytes',
    // Served bytes are always the sniffed type; browsers must not guess another one.
    'x-content-type-options': 'nosniff',
    // Opened directly (not as an <img>), a file may run nothing: this matters for generated SVG code images.
    'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; sandbox",
  }
  if (isFresh(req, etag, file.modifiedAt)) {
    res.writeHead(304, headers)
    res.end()
    return
  }
  const ifRange = req.headers['if-range']
  const range = ifRange && ifRange !== etag ? null : parseRange(req.headers.range, file.size)
  if (range === 'unsatisfiable') {
    // 416 has no tRPC error code, so it is answered here rather than thrown.
    sendError(res, 416, 'Requested range not satisfiable', { 'content-range': `bytes */${file.size}` }, services.clock())
    return
  }
  const status = range ? 206 : 200
  if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${file.size}`
  headers['content-length'] = range ? range.end - range.start + 1 : file.size
  if (method === 'HEAD') {
    res.writeHead(status, headers)
    res.end()
    return
  }
  const body = await services.storage.get(key, range ?? undefined)
  if (!body) throw notFound()
  res.writeHead(status, headers)
  await pipeline(body, res).catch(() => {
    // The client went away mid-download; nothing to answer.
  })
}
