import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createApp, type App } from '../../src/server/app.js'
import { loadConfig, type RateLimits } from '../../src/server/config.js'
import { silentLogger, type Logger } from '../../src/server/logger.js'
import { createServices, type Clock, type Services } from '../../src/server/services.js'

export interface TestResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

export interface RequestOptions {
  body?: unknown
  token?: string
  headers?: Record<string, string>
  /** Send this exact text as the body (for malformed JSON). */
  raw?: string | Buffer | FormData
}

export interface TestServer {
  url: string
  app: App
  services: Services
  dataDir: string
  /** Calls the server over HTTP as a client would; parses JSON answers. */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>
  close(): Promise<void>
}

/** A controllable clock for expiry tests. */
export function manualClock(start = new Date('2026-01-01T00:00:00Z')) {
  let now = start.getTime()
  const clock: Clock = () => new Date(now)
  return { clock, advance: (ms: number) => void (now += ms), set: (date: Date) => void (now = date.getTime()) }
}

export function tempDir(prefix = 'plaza-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix))
}

/** Starts the real server in-process on an ephemeral port over a fresh temp data directory. */
export async function startTestServer(
  options: { clock?: Clock; rateLimits?: RateLimits | false; dataDir?: string; env?: NodeJS.ProcessEnv; logger?: Logger } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir()
  const config = loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: options.rateLimits ?? false }, options.env ?? {})
  const services = await createServices(config, { clock: options.clock, logger: options.logger ?? silentLogger })
  const app = createApp(services)
  // Longer than any pause in a test: fetch may reuse an idle connection just as a 5 s server timeout closes it on a busy machine.
  app.server.keepAliveTimeout = 60_000
  const address = await app.listen(0, '127.0.0.1')
  config.port = address.port
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    app,
    services,
    dataDir,
    async request(method, route, { body, token, headers = {}, raw } = {}) {
      const init: RequestInit = { method, headers: { ...headers } }
      if (token) (init.headers as Record<string, string>).authorization = `Bearer ${token}`
      if (raw !== undefined) init.body = raw as RequestInit['body']
      else if (body !== undefined) {
        init.body = JSON.stringify(body)
        ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
      }
      const response = await fetch(url + route, init)
      const type = response.headers.get('content-type') ?? ''
      const parsed: any = type.includes('json') ? await response.json() : Buffer.from(await response.arrayBuffer())
      return { status: response.status, headers: response.headers, body: parsed }
    },
    async close() {
      await app.close()
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

let counter = 0
/** Registers a fresh user through the API; returns its session token and id. */
export async function registerUser(server: TestServer, name?: string) {
  const username = name ?? `user${process.pid}_${++counter}`
  const res = await server.request('POST', '/api/mobile/auth/register', {
    body: { username, email: `${username}@example.com`, password: 'correct horse', full_name: `Name ${username}` },
  })
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`)
  return { token: res.body.data.token as string, id: res.body.data.user.id as number, username }
}

export type RegisteredUser = Awaited<ReturnType<typeof registerUser>>

/** A test server with one registered user: what a suite that only needs someone signed in starts with. */
export async function startServerWithUser(): Promise<{ server: TestServer; user: RegisteredUser }> {
  const server = await startTestServer()
  return { server, user: await registerUser(server) }
}
