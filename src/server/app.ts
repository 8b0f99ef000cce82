import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createHTTPHandler } from '@trpc/server/adapters/standalone'
import { TRPCError } from '@trpc/server'
import { applyCors } from './cors.js'
import { answerSocket, capConnections } from './connections.js'
import { createRequestContext, JSON_BODY_LIMIT, sendError, sendRedirect, sendSuccess } from './http.js'
import { toPublicError } from './errors.js'
import { createRestHandler, sendRouteError } from './rest/adapter.js'
import { mobileRoutes } from './rest/mobile.js'
import { catalogOperations, rootRoutes, utilityRoutes } from './rest/utility.js'
import { logRequest, requestId, setRoute } from './request-log.js'
import { appRouter } from './router.js'
import { serveUpload } from './uploads/serve.js'
import type { Services } from './services.js'

export interface App {
  server: http.Server
  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  listen(port: number, host: string): Promise<AddressInfo>
  /** Stops accepting connections, lets in-flight requests finish, then releases the services. */
  close(): Promise<void>
}

/** A tRPC batch of many calls still fits: its inputs are the same JSON the REST bodies are. */
const TRPC_BODY_LIMIT = JSON_BODY_LIMIT

/**
 * A 405 for a path the server knows, with `Allow` listing the methods it serves. Every path says
 * so itself (the route tables, /trpc, /health, /uploads, /): an unknown method (TRACE, WebDAV
 * verbs) included, and a path nobody serves is a 404 whatever the method.
 */
function methodNotAllowed(res: ServerResponse, method: string, allow: string) {
  res.setHeader('allow', allow)
  return new TRPCError({ code: 'METHOD_NOT_SUPPORTED', message: `Method ${method} is not allowed here; use ${allow}` })
}

/** What `OPTIONS *` answers: every method some path of the server serves. */
const SERVER_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'

/** An absolute-form request target (`GET http://host/path HTTP/1.1`), which a server must accept (RFC 9112 §3.2.2). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

const badTarget = (message: string) => new TRPCError({ code: 'BAD_REQUEST', message })

/** `new URL(text)`, or null when it is not one (`URL.parse` is not in every Node 20). */
function parseUrl(text: string): URL | null {
  try {
    return new URL(text)
  } catch {
    return null
  }
}

/**
 * The request's path. An absolute-form target is read as its path and query, and `req.url` becomes
 * those, so tRPC and the route tables see what they would from a path. A target that is neither a
 * path nor an http(s) URL (`*` outside OPTIONS, `http://a:99999/`, `http://[::1/`, `http://%zz/`)
 * or that holds a malformed `%` escape is a 400.
 */
function requestPath(req: IncomingMessage): string {
  const target = req.url ?? '/'
  let url: URL | null = null
  // A path is read under a fixed origin: resolved against a base, `//host/path` would name a host.
  if (target.startsWith('/')) url = parseUrl(`http://localhost${target}`)
  else if (ABSOLUTE_FORM.test(target)) {
    url = parseUrl(target)
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw badTarget('The request target is not a valid http(s) URL')
    req.url = url.pathname + url.search
  }
  if (!url) throw badTarget('The request target must be a path such as /health, or an http(s) URL')
  try {
    decodeURIComponent(url.pathname)
  } catch {
    throw badTarget('The request path has a malformed % escape')
  }
  return url.pathname
}

/**
 * Answers 408 when the request's body has not fully arrived `ms` after it started (a stalled or
 * trickling upload), and closes the connection; the handler still waiting on it sees the request end.
 */
function limitBodyTime(req: IncomingMessage, res: ServerResponse, ms: number, services: Services) {
  const timer = setTimeout(() => {
    if (req.complete || res.headersSent) return
    res.once('finish', () => req.socket?.destroy())
    sendError(res, 408, `The request body did not arrive within ${Math.round(ms / 1000)} s`, { connection: 'close' }, services.clock())
  }, ms)
  timer.unref()
  res.once('close', () => clearTimeout(timer))
}

/**
 * Malformed HTTP (bad request line, huge headers) and request heads that did not arrive within
 * the headers timeout (a connection that never sent a byte included): an envelope, then the socket
 * is closed, whether or not the peer reads it or ever closes its side.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket) {
  if (!socket.writable) return void socket.destroy()
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (pending) {
    // Node's own request timeout, met by a request whose body is still arriving (it may check before limitBodyTime's timer fires): the same 408.
    if (error.code !== 'ERR_HTTP_REQUEST_TIMEOUT' || pending.headersSent) return void socket.destroy()
    pending.once('finish', () => socket.destroy())
    return sendError(pending, 408, 'The request body did not arrive in time', { connection: 'close' })
  }
  const [status, text, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request did not arrive in time']
        : [400, 'Bad Request', 'The request is not valid HTTP']
  // An answer to HEAD has no body, even one written here past node's response object (a client would read it as a next answer).
  const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD '
  answerSocket(socket, status, text, message, head)
}

/** Builds the HTTP server: /trpc, /api/mobile, /api, /uploads and /health on one port (decisions §1). */
export function createApp(services: Services): App {
  const { config, logger } = services
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    maxBodySize: TRPC_BODY_LIMIT,
    createContext: ({ req, res }) => createRequestContext(services, req, res),
    // A rate-limit refusal says when to come back, as it does on the REST paths.
    responseMeta({ errors }) {
      const retryAfter = Math.max(0, ...errors.map((error) => toPublicError(error).retryAfter ?? 0))
      return retryAfter ? { headers: { 'retry-after': String(retryAfter) } } : {}
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') {
        logger.error('procedure failed', { path, error: String(error.cause?.stack ?? error.stack ?? error) })
      }
    },
  })
  const mounts: Array<{ prefix: string; handle: ReturnType<typeof createRestHandler> }> = [
    { prefix: '/api/mobile', handle: createRestHandler(mobileRoutes) },
    { prefix: '/api', handle: createRestHandler(utilityRoutes) },
    { prefix: '', handle: createRestHandler(rootRoutes) },
  ]

  const observer = services.metrics?.requests

  let closing = false

  async function dispatch(req: IncomingMessage, res: ServerResponse) {
    if (!connections.admits(req)) return void res.destroy()
    // While shutting down, every answer ends its connection.
    if (closing) res.setHeader('connection', 'close')
    const id = requestId(req)
    res.setHeader('x-request-id', id)
    logRequest(logger, req, res, id, observer)
    limitBodyTime(req, res, config.requestTimeoutMs, services)
    const ctx = createRequestContext(services, req, res)
    try {
      // An embedded replica behind another process of this host's latest write: it catches up first (read-your-writes).
      const catchingUp = services.caughtUp()
      if (catchingUp) await catchingUp
      if (applyCors(config.corsOrigins, req, res)) return setRoute(req, 'CORS preflight')
      const method = req.method ?? 'GET'
      // `OPTIONS *` asks about the server as a whole (RFC 9110 §9.3.7): the methods it serves somewhere.
      if (req.url === '*' && method === 'OPTIONS') {
        setRoute(req, '*')
        res.writeHead(204, { allow: SERVER_METHODS })
        return void res.end()
      }
      const pathname = requestPath(req)
      if (pathname === '/trpc' || pathname.startsWith('/trpc/')) {
        setRoute(req, pathname.slice(0, 200))
        if (method !== 'GET' && method !== 'POST') throw methodNotAllowed(res, method, 'GET, POST')
        if (Number(req.headers['content-length']) > TRPC_BODY_LIMIT) {
          throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${TRPC_BODY_LIMIT} bytes` })
        }
        return trpc(req, res)
      }
      if (pathname === '/health') {
        setRoute(req, '/health')
        if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(res, method, 'GET, HEAD')
        return sendSuccess(res, { status: 'ok' }, { message: 'OK', now: services.clock() })
      }
      if (pathname === '/uploads' || pathname.startsWith('/uploads/')) {
        setRoute(req, '/uploads/:kind/:file')
        return await serveUpload(services, req, res, pathname)
      }
      // The root has no page of its own: people arriving there want the API reference.
      if (pathname === '/') {
        setRoute(req, '/')
        if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(res, method, 'GET, HEAD')
        return sendRedirect(res, '/docs')
      }
      for (const mount of mounts) {
        if (pathname === mount.prefix || pathname.startsWith(mount.prefix + '/')) {
          if (await mount.handle(req, res, pathname.slice(mount.prefix.length) || '/', ctx, mount.prefix)) return
        }
      }
      sendError(res, 404, `Not found: ${method} ${pathname}`, {}, services.clock())
    } catch (error) {
      sendRouteError({ req, res, ctx }, error)
    }
  }

  const server = http.createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      // How often Node checks those two timeouts (default 30 s, which would let a stalled request live that much longer).
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
    },
    (req, res) => void dispatch(req, res),
  )
  server.keepAliveTimeout = config.keepAliveTimeoutMs
  server.maxConnections = config.maxConnections
  server.on('clientError', answerClientError)
  const connections = capConnections(server, { maxPerAddress: config.maxConnectionsPerAddress, trustProxy: config.trustProxy })
  services.metrics?.describeApp({ operations: catalogOperations, procedures: Object.keys(appRouter._def.procedures), connections })

  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          resolve(server.address() as AddressInfo)
        })
      })
    },
    async close() {
      closing = true
      // Event streams never finish on their own: end them, so the server can close (clients resume with Last-Event-ID).
      services.notificationFeed.close()
      // Heavy jobs get a short grace, not their own time budgets (a minute of speech): their requests are answered either way.
      const work = services.stopWork(config.stopGraceMs)
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
        // A connection whose request was in flight becomes idle when it is answered: close it then, not at its keep-alive timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 100)
        server.once('close', () => clearInterval(sweep))
      })
      await work
      await services.close()
    },
  }
}
