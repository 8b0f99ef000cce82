/**
 * The access log: one JSON line per request on stderr (method, route template, status, bytes,
 * duration, request id). The route is the template (`/api/mobile/posts/detail/:post_id`), never
 * the raw URL, so tokens and query strings never reach the log.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from './logger.js'

const routes = new WeakMap<IncomingMessage, string>()

/** Names the route template that served `req`, for its access-log line. */
export function setRoute(req: IncomingMessage, template: string) {
  routes.set(req, template)
}

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** Bytes per request id (72 random bits, 12 base64url characters). */
const ID_BYTES = 9
/**
 * Random bytes for ids, drawn from the system 512 ids at a time: one `randomBytes` call per
 * request cost about 8% of a light request's time (as `crypto.randomUUID` does, for the same reason).
 */
let idPool = Buffer.alloc(0)
let idOffset = 0

function freshId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 512)
    idOffset = 0
  }
  idOffset += ID_BYTES
  return idPool.toString('base64url', idOffset - ID_BYTES, idOffset)
}

/** The client's `X-Request-Id` when it is a plain token, else a fresh one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && INCOMING_ID.test(given) ? given : freshId()
}

/**
 * Writes the request's line when the answer is finished, or one info line when the client went
 * away first (status 499, as nginx logs it): a disconnect is not an error.
 */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, id: string) {
  const started = performance.now()
  const written = req.socket.bytesWritten
  let done = false
  const line = (aborted: boolean) => {
    if (done) return
    done = true
    logger.info(aborted ? 'client closed the connection' : 'request', {
      id,
      method: req.method,
      route: routes.get(req) ?? null,
      status: aborted && !res.writableFinished ? 499 : res.statusCode,
      bytes: Math.max(0, req.socket.bytesWritten - written),
      ms: Math.round((performance.now() - started) * 10) / 10,
    })
  }
  res.once('finish', () => line(false))
  res.once('close', () => line(!res.writableFinished))
}
