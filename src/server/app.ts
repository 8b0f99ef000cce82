import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHTTPHandler } from '@trpc/server/adapters/standalone'
import { createRequestContext, sendError, sendSuccess } from './http.js'
import { createRestHandler, sendRouteError } from './rest/adapter.js'
import { mobileRoutes } from './rest/mobile.js'
import { utilityRoutes } from './rest/utility.js'
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

/** Builds the HTTP server: /trpc, /api/mobile, /api, /uploads and /health on one port (decisions §1). */
export function createApp(services: Services): App {
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    createContext: ({ req }) => createRequestContext(services, req),
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') {
        services.logger.error('procedure failed', { path, error: String(error.cause?.stack ?? error.stack ?? error) })
      }
    },
  })
  const mounts: Array<{ prefix: string; handle: ReturnType<typeof createRestHandler> }> = [
    { prefix: '/api/mobile', handle: createRestHandler(mobileRoutes) },
    { prefix: '/api', handle: createRestHandler(utilityRoutes) },
  ]

  async function dispatch(req: IncomingMessage, res: ServerResponse) {
    const ctx = createRequestContext(services, req)
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://localhost')
      if (pathname === '/trpc' || pathname.startsWith('/trpc/')) return trpc(req, res)
      if (pathname === '/health') return sendSuccess(res, { status: 'ok' }, { message: 'OK', now: services.clock() })
      if (pathname === '/uploads' || pathname.startsWith('/uploads/')) return await serveUpload(services, req, res, pathname)
      for (const mount of mounts) {
        if (pathname === mount.prefix || pathname.startsWith(mount.prefix + '/')) {
          if (await mount.handle(req, res, pathname.slice(mount.prefix.length) || '/', ctx)) return
        }
      }
      sendError(res, 404, `Not found: ${req.method} ${pathname}`, {}, services.clock())
    } catch (error) {
      sendRouteError({ req, res, ctx }, error)
    }
  }

  const server = http.createServer((req, res) => void dispatch(req, res))
  server.keepAliveTimeout = 5_000

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
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      })
      await services.close()
    },
  }
}
