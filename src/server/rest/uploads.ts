/**
 * The upload routes: a thin multipart wrapper around `saveUpload`. The file (form field `file`) is
 * streamed through @fastify/busboy into the pipeline, which enforces the size limit as bytes arrive.
 */
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy'
import { TRPCError } from '@trpc/server'
import { discardBody, sendSuccess } from '../http.js'
import { requireSession } from '../trpc.js'
import { maxUploadBytes, MiB, saveUpload, type UploadKind } from '../uploads/pipeline.js'
import type { HandlerRoute } from './adapter.js'

/** The catalog's POST forms drop an unread rest as uploads do (it lives in http.ts, beside the JSON reader). */
export { discardBody }

/** Room for the multipart boundaries, part headers and small fields around the file. */
const MULTIPART_OVERHEAD = 64 * 1024

const badForm = (detail: string) => new TRPCError({ code: 'BAD_REQUEST', message: `${detail}: send multipart/form-data with the file in the field "file"` })
const unreadableForm = (error: unknown) => badForm(`The multipart form could not be read (${(error as Error)?.message ?? error})`)

/**
 * The file part's bytes, ending only once the whole form has been read, so that a form cut off
 * after its file is refused too. busboy fails a part that ends early with a plain Error ("Part
 * terminated early due to unexpected end of multipart data"): the client's fault, so a 400.
 */
async function* readFilePart(stream: Readable, formEnd: Promise<void>): AsyncGenerator<Buffer> {
  try {
    yield* stream
    await formEnd
  } catch (error) {
    throw error instanceof TRPCError ? error : unreadableForm(error)
  }
}

/** Resolves with the bytes of the form's `file` part, or null when the form has none. */
function receiveFile(req: IncomingMessage, maxBytes: number): Promise<AsyncIterable<Buffer> | null> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance
    try {
      parser = new Busboy({
        headers: req.headers as BusboyHeaders,
        limits: { fileSize: maxBytes, parts: 20, fields: 10, fieldSize: 64 * 1024 },
        // A part named `file` is the file even without a filename (curl -F 'file=<photo.jpg').
        isPartAFile: (name, type, filename) => name === 'file' || filename !== undefined || type === 'application/octet-stream',
      })
    } catch {
      reject(badForm('The request is not multipart form data'))
      return
    }
    let file: Readable | null = null
    let settleForm!: { resolve: () => void; reject: (error: unknown) => void }
    const formEnd = new Promise<void>((resolve, reject) => (settleForm = { resolve, reject }))
    // Awaited by the file's reader; without a file the failure is reported through `reject` instead.
    formEnd.catch(() => {})
    parser.on('file', (name, stream) => {
      // busboy emits 'error' on a part cut short; an 'error' without a listener would end the process.
      // The file part's reader sees the error anyway (readPart), and other parts are dropped.
      stream.on('error', () => {})
      if (name !== 'file' || file) {
        stream.resume()
        return
      }
      file = stream
      // busboy would silently truncate at the limit; the upload is refused instead.
      stream.on('limit', () => stream.destroy(new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `File is too large: at most ${maxBytes / MiB} MiB` })))
      resolve(readFilePart(stream, formEnd))
    })
    parser.on('finish', () => {
      settleForm.resolve()
      if (!file) resolve(null)
    })
    parser.on('error', (error: unknown) => {
      const failure = unreadableForm(error)
      settleForm.reject(failure)
      if (file) file.destroy(failure)
      else reject(failure)
    })
    req.on('close', () => {
      if (req.complete) return
      // The form will never finish: fail the file being read, or the wait for one.
      const interrupted = new TRPCError({ code: 'CLIENT_CLOSED_REQUEST', message: 'The upload was interrupted' })
      settleForm.reject(interrupted)
      if (file) file.destroy(interrupted)
      else reject(interrupted)
    })
    req.pipe(parser)
  })
}

/**
 * The bytes of a form's `file` (at most `maxBytes`), for the catalog's POST forms, which process
 * the file rather than store it. On a refusal the rest of the request is dropped as for uploads.
 */
export async function readFormFile(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  try {
    if (Number(req.headers['content-length']) > maxBytes + MULTIPART_OVERHEAD) {
      throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `file: the file is larger than ${maxBytes / MiB} MiB` })
    }
    const file = await receiveFile(req, maxBytes)
    if (!file) throw badForm('No file was sent')
    const chunks: Buffer[] = []
    for await (const chunk of file) chunks.push(chunk)
    return Buffer.concat(chunks)
  } catch (error) {
    discardBody(req)
    throw error
  }
}

/** The handler of one upload route (`POST /upload/<kind>` in the route table). */
export function handleUpload(kind: UploadKind): HandlerRoute['handle'] {
  return async ({ req, res, ctx }) => {
    try {
      const session = await requireSession(ctx, 'upload')
      const maxBytes = maxUploadBytes(kind)
      if (Number(req.headers['content-length']) > maxBytes + MULTIPART_OVERHEAD) {
        throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `File is too large: ${kind} uploads may be at most ${maxBytes / MiB} MiB` })
      }
      const file = await receiveFile(req, maxBytes)
      if (!file) throw badForm('No file was sent')
      const result = await saveUpload(ctx.services, { userId: session.user.id, kind, source: file, origin: ctx.origin })
      sendSuccess(res, result, { status: 201, message: 'File uploaded', now: ctx.services.clock() })
    } catch (error) {
      discardBody(req)
      throw error
    }
  }
}
