import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createApp, type App } from '../../src/server/app.js'
import { loadConfig, type RateLimits } from '../../src/server/config.js'
import { silentLogger, type Logger } from '../../src/server/logger.js'
import { createServices, type Clock, type Services } from '../../src/server/services.js'
import { databaseEnvFor, forgetRemoteDatabase, recordRemoteDatabase } from './databases.js'
import { recordAnswers } from './recorder.js'
import { startSqld, type Sqld } from './sqld.js'
import { suiteEnv } from './suite-env.js'

export { databaseEnvFor } from './databases.js'

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

/** Directories tempDir made in this process (each test file runs in a process of its own, test/run.ts). */
const madeDirs: string[] = []

/** A fresh directory under the system's temp directory, removed when the test process exits. */
export function tempDir(prefix = 'plaza-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  if (madeDirs.length === 0) process.once('exit', () => madeDirs.forEach((made) => rmSync(made, { recursive: true, force: true })))
  madeDirs.push(dir)
  return dir
}

/**
 * Which database the test servers use: the local file in their data directory, or, with
 * `PLAZA_TEST_DATABASE=sqld`, a fresh real libsql server (sqld.ts) for each, reached over HTTP as
 * an operator's would be (`npm run test:hrana`, docs/deploy.md).
 */
export const TEST_DATABASE: 'file' | 'sqld' = process.env.PLAZA_TEST_DATABASE === 'sqld' ? 'sqld' : 'file'

/** The URL @libsql/client opens the test server's database with: its plaza.db file, or its libsql server. */
export function databaseUrlOf(server: TestServer): string {
  return databaseEnvFor(server.dataDir).PLAZA_DATABASE_URL ?? `file:${path.join(server.dataDir, 'plaza.db')}`
}

/**
 * Starts the real server in-process on an ephemeral port over a fresh temp data directory.
 * `databaseUrl` points it at a libsql server (a sqld shared by several hosts, or a replica);
 * without it, PLAZA_TEST_DATABASE decides (TEST_DATABASE).
 */
export async function startTestServer(
  options: { clock?: Clock; rateLimits?: RateLimits | false; dataDir?: string; env?: NodeJS.ProcessEnv; logger?: Logger; databaseUrl?: string } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir()
  let sqld: Sqld | null = null
  let databaseUrl = options.databaseUrl
  if (!databaseUrl && TEST_DATABASE === 'sqld' && !options.env?.PLAZA_DATABASE_URL) {
    // A data directory the caller chose may be served again (a restart): the server's data lives in it, as plaza.db would.
    sqld = await startSqld(options.dataDir ? { dir: path.join(dataDir, 'sqld') } : {})
    databaseUrl = sqld.url
  }
  const env = { ...suiteEnv(), ...options.env, ...(databaseUrl ? { PLAZA_DATABASE_URL: databaseUrl } : {}) }
  const config = loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: options.rateLimits ?? false }, env)
  let services: Services
  try {
    services = await createServices(config, { clock: options.clock, logger: options.logger ?? silentLogger })
  } catch (error) {
    await sqld?.close()
    throw error
  }
  if (databaseUrl) recordRemoteDatabase(dataDir, databaseUrl)
  const app = createApp(services)
  // Under the test runner, every answer is kept and checked against the OpenAPI document after the run (recorder.ts).
  recordAnswers(app.server)
  // Longer than any pause in a test: fetch may reuse an idle connection just as a 5 s server timeout closes it on a busy machine
  // (unless the test is about that timeout).
  if (!options.env?.PLAZA_KEEPALIVE_TIMEOUT_MS) app.server.keepAliveTimeout = 60_000
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
      await sqld?.close()
      forgetRemoteDatabase(dataDir)
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
