import type { IncomingMessage, ServerResponse } from 'node:http'
import { TRPCError } from '@trpc/server'
import { errorEnvelope, successEnvelope } from '../shared/envelope.js'
import { clientAddress } from './client-address.js'
import { rateLimitHeaders } from './rate-limit-headers.js'
import type { Context } from './trpc.js'
import type { Services } from './services.js'

export const JSON_BODY_LIMIT = 1024 * 1024

const tooLarge = (limit: number) => new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${limit} bytes` })

/** After a refusal the rest of a body is read and dropped, up to this much; then the connection is closed. */
export const DRAIN_LIMIT = 64 * 1024 * 1024

const discarding = new WeakSet<IncomingMessage>()

/**
 * Reads and drops whatever is left of the request body, so that the answer already decided (a 413,
 * a 429) reaches a client that is still sending, instead of a reset; past `DRAIN_LIMIT` the socket is closed.
 */
export function discardBody(req: IncomingMessage) {
  if (req.complete || req.destroyed || discarding.has(req)) return
  discarding.add(req)
  req.unpipe()
  let drained = 0
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length
    if (drained > DRAIN_LIMIT) req.socket?.destroy()
  })
  req.resume()
}

/**
 * Reads the whole body, refusing (413) as soon as it passes `limit` bytes: at once when
 * Content-Length says so, else at the byte past the limit as a chunked body arrives. A refused
 * body is not buffered further, and the request is not destroyed (that would take the socket, and
 * the answer, with it): the rest is drained while the 413 goes out.
 */
export function readBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<Buffer> {
  if (Number(req.headers['content-length']) > limit) return Promise.reject(tooLarge(limit))
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const stop = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      stop()
      chunks.length = 0
      discardBody(req)
      reject(tooLarge(limit))
    }
    const onEnd = () => {
      stop()
      resolve(Buffer.concat(chunks))
    }
    const onError = (error: Error) => {
      stop()
      reject(error)
    }
    // Destroyed without an error (the socket closed under it): the client is gone.
    const onClose = () => {
      stop()
      reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
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

/** A request's context; with its answer `res`, each rate-limit count it meets is written there as RateLimit fields. */
export function createRequestContext(services: Services, req: IncomingMessage, res?: ServerResponse): Context {
  const { rateLimits } = services.config
  return {
    services,
    token: bearerToken(req),
    clientAddress: clientAddress(req, services.config.trustProxy),
    origin: requestOrigin(services, req),
    userAgent: req.headers['user-agent'] ?? '',
    onRateLimit: res && rateLimits ? rateLimitHeaders(res, rateLimits) : undefined,
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
