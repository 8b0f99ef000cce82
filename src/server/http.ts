import type { IncomingMessage, ServerResponse } from 'node:http'
import { TRPCError } from '@trpc/server'
import { errorEnvelope, successEnvelope } from '../shared/envelope.js'
import { clientAddress } from './client-address.js'
import type { Context } from './trpc.js'
import type { Services } from './services.js'

export const JSON_BODY_LIMIT = 1024 * 1024

/** Reads the whole body, refusing (413) as soon as it passes `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (declared > limit) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${limit} bytes` })
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${limit} bytes` })
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** Parses a JSON body; an empty body is `{}`, malformed JSON is a 400. */
export async function readJson(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<unknown> {
  const text = (await readBody(req, limit)).toString('utf8')
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'Request body is not valid JSON' })
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const payload = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), ...headers })
  res.end(payload)
}

/**
 * A 302 to `location`. The body says where, as the utility API's JSON answers do (`{message, ...}`),
 * for a client that does not follow redirects; an answer to HEAD drops it.
 */
/**
 * Writes `text` to a streamed answer (SSE), and when the socket's buffer is full waits until the
 * client has read it (or has gone), so a slow reader holds back the writer instead of its memory.
 */
export async function writeStreamed(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

export function sendRedirect(res: ServerResponse, location: string) {
  sendJson(res, 302, { message: `Found: ${location}`, location }, { location, 'cache-control': 'no-store' })
}

export function sendSuccess(res: ServerResponse, data: unknown, options: { status?: number; message?: string; now?: Date } = {}) {
  sendJson(res, options.status ?? 200, successEnvelope(data, options.message ?? 'Success', options.now))
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, now?: Date) {
  sendJson(res, status, errorEnvelope(message, now), headers)
}

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

/** The origin for absolute URLs: PLAZA_PUBLIC_URL, else the request's Host (when well-formed), else the bound address. */
export function requestOrigin(services: Services, req: IncomingMessage): string {
  if (services.config.publicUrl) return services.config.publicUrl
  const host = req.headers.host
  if (host && HOST_HEADER.test(host)) return `http://${host}`
  return `http://${services.config.host}:${services.config.port}`
}

export function bearerToken(req: IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
  return match ? match[1] : null
}

export function createRequestContext(services: Services, req: IncomingMessage): Context {
  return {
    services,
    token: bearerToken(req),
    clientAddress: clientAddress(req, services.config.trustProxy),
    origin: requestOrigin(services, req),
    userAgent: req.headers['user-agent'] ?? '',
  }
}

/** An AbortSignal that fires when the client goes away before the answer is finished (upstream calls made for it stop then). */
export function closedSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  return controller.signal
}
