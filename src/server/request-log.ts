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

/** Told of every request as it starts and ends, with what its log line says (metrics/recorder.ts). */
export interface RequestObserver {
  started(): void
  finished(method: string | undefined, route: string | null, status: number, ms: number): void
}

/**
 * Writes the request's line when the answer is finished, or one info line when the client went
 * away first (status 499, as nginx logs it): a disconnect is not an error. `observer` hears of the
 * same request from the same hooks, so recording metrics adds no listeners of its own.
 */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, id: string, observer?: RequestObserver) {
  const started = performance.now()
  observer?.started()
  // Kept: the request lets go of its socket when it is destroyed, before this line is written.
  const socket = req.socket
  const written = socket.bytesWritten
  let done = false
  const line = (aborted: boolean) => {
    if (done) return
    done = true
    const route = routes.get(req) ?? null
    const status = aborted && !res.writableFinished ? 499 : res.statusCode
    const ms = performance.now() - started
    logger.info(aborted ? 'client closed the connection' : 'request', {
      id,
      method: req.method,
      route,
      status,
      bytes: Math.max(0, socket.bytesWritten - written),
      ms: Math.round(ms * 10) / 10,
    })
    observer?.finished(req.method, route, status, ms)
  }
  res.once('finish', () => line(false))
  res.once('close', () => line(!res.writableFinished))
}
