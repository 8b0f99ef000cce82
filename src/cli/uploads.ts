/**
 * Uploads from the CLI. Remote: multipart POST to `<url>/api/mobile/upload/<kind>` (field `file`,
 * bearer token) with undici and formdata-node, as a mobile client would. Embedded: the server's own
 * `saveUpload`, on the same services the embedded tRPC client uses. Both give the same UploadResult,
 * except that embedded (with no PLAZA_PUBLIC_URL) its `url` is the file's `file://` URL in the data directory.
 */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { UploadResult } from '../shared/types.js'
import { NeedsLoginError } from './base.js'
import { remoteFetch, unreachable, UsageError, type PlazaClient } from './client.js'

export const UPLOAD_KINDS = { avatar: 'avatars', post: 'posts', story: 'stories', comment: 'comments' } as const
export type UploadRoute = keyof typeof UPLOAD_KINDS

/** Called with the bytes sent so far and the total expected (the total is approximate: the multipart framing is small). */
export type Progress = (sent: number, total: number) => void

async function checkFile(file: string): Promise<number> {
  try {
    const info = await stat(file)
    if (!info.isFile()) throw new UsageError(`${file} is not a file`)
    return info.size
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
}

export async function uploadFile(client: PlazaClient, token: string | null, route: UploadRoute, file: string, progress?: Progress): Promise<UploadResult> {
  if (!token) throw new NeedsLoginError()
  const size = await checkFile(file)
  return client.services ? uploadEmbedded(client, token, route, file, size, progress) : uploadRemote(client, token, route, file, size, progress)
}

async function uploadEmbedded(client: PlazaClient, token: string, route: UploadRoute, file: string, size: number, progress?: Progress): Promise<UploadResult> {
  const services = client.services!
  const [{ saveUpload }, { resolveSession, assertNotSuspended }] = await Promise.all([import('../server/uploads/pipeline.js'), import('../server/auth/sessions.js')])
  const session = await resolveSession(services.db, token, services.clock())
  if (!session) throw new NeedsLoginError('Invalid or expired token (log in with `plaza social login`)')
  assertNotSuspended(session.user)
  let sent = 0
  const source = createReadStream(file).on('data', (chunk) => {
    sent += chunk.length
    progress?.(sent, size)
  })
  const origin = services.config.publicUrl ?? `http://${services.config.host}:${services.config.port}`
  const result = await saveUpload(services, { userId: session.user.id, kind: UPLOAD_KINDS[route], source, origin })
  // No server runs: an http://127.0.0.1:8080/… url would point nowhere. Say where the file really is (unless a public URL is configured).
  if (services.config.publicUrl) return result
  const [{ LocalDiskStorage }, { pathToFileURL }] = await Promise.all([import('../server/uploads/storage.js'), import('node:url')])
  if (!(services.storage instanceof LocalDiskStorage)) return result
  return { ...result, url: pathToFileURL(path.join(services.config.dataDir, ...result.path.split('/'))).href }
}

interface Envelope<T> {
  status: 'success' | 'error'
  message: string
  data: T
}

async function uploadRemote(client: PlazaClient, token: string, route: UploadRoute, file: string, size: number, progress?: Progress): Promise<UploadResult> {
  const [{ FormData }, { fileFromPath }, { FormDataEncoder }, { Readable }] = await Promise.all([
    import('formdata-node'),
    import('formdata-node/file-from-path'),
    import('form-data-encoder'),
    import('node:stream'),
  ])
  const form = new FormData()
  form.set('file', await fileFromPath(file, path.basename(file)))
  // The encoder gives the multipart bytes with an exact Content-Length, and lets us count them as they leave.
  const encoder = new FormDataEncoder(form)
  const total = encoder.contentLength ? Number(encoder.contentLength) : size
  let sent = 0
  async function* counted() {
    for await (const chunk of encoder.encode()) {
      sent += chunk.byteLength
      progress?.(sent, total)
      yield chunk
    }
  }
  const body = Readable.from(counted())
  const url = `${client.target.kind === 'remote' ? client.target.url : ''}/api/mobile/upload/${route}`
  let response: Awaited<ReturnType<typeof remoteFetch>>
  try {
    response = await remoteFetch(url, {
      method: 'POST',
      body: body as never,
      duplex: 'half',
      headers: { ...encoder.headers, authorization: `Bearer ${token}` },
    })
  } catch (error) {
    throw unreachable(client.target.kind === 'remote' ? client.target.url : url, error)
  }
  const text = await response.text()
  let envelope: Envelope<UploadResult> | null = null
  try {
    envelope = JSON.parse(text)
  } catch {
    // not JSON: reported below with the HTTP status
  }
  if (response.status === 401) throw new NeedsLoginError(`${envelope?.message ?? 'Unauthorized'} (log in with \`plaza social login\`)`)
  if (!response.ok || envelope?.status !== 'success') {
    throw new Error(envelope?.message ?? `upload failed: HTTP ${response.status} from ${url}`)
  }
  return envelope.data
}
