/**
 * CORS for browser clients, off unless `PLAZA_CORS_ORIGINS` is set (`*` or a list of origins).
 * Plaza authenticates with bearer tokens, never cookies, so credentials are never allowed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

export const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS'
const ALLOWED_HEADERS = 'authorization, content-type, accept, x-request-id, last-event-id, trpc-accept'
const EXPOSED_HEADERS = 'retry-after, ratelimit, ratelimit-policy, x-request-id, x-image-width, x-image-height, x-code-language, content-length, content-range'

/**
 * Adds the CORS headers an allowed origin needs; answers a preflight (204) and returns true, in
 * which case the request is done.
 */
export function applyCors(origins: '*' | string[] | null, req: IncomingMessage, res: ServerResponse): boolean {
  if (!origins) return false
  const origin = req.headers.origin
  if (!origin) return false
  res.setHeader('vary', 'Origin')
  const allowed = origins === '*' || origins.includes(origin)
  const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined
  if (!allowed) return false
  res.setHeader('access-control-allow-origin', origins === '*' ? '*' : origin)
  if (!preflight) {
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS)
    return false
  }
  res.writeHead(204, {
    'access-control-allow-methods': CORS_METHODS,
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': '600',
    'content-length': '0',
  })
  res.end()
  return true
}
