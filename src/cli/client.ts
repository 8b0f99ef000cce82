/**
 * The CLI's one tRPC client. Its link is chosen once: `httpLink` to a remote server (`--url`/`PLAZA_URL`),
 * or `localLink` to the same router in-process on a local data directory (embedded, no server).
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { createTRPCClient, httpLink, localLink, type TRPCClient } from '@trpc/client'
import type { Agent, FormData as UndiciFormData, fetch as undiciFetch } from 'undici'
import type { AppRouter } from '../server/router.js'
import type { Services } from '../server/services.js'

export type Target = { kind: 'remote'; url: string } | { kind: 'embedded'; dataDir: string }

/** The key sessions are stored under: the server's URL, or the embedded data directory. */
export function targetKey(target: Target): string {
  return target.kind === 'remote' ? target.url : `embedded:${target.dataDir}`
}

export function resolveTarget(url: string | undefined, dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Target {
  const remote = url ?? env.PLAZA_URL
  if (remote) {
    let parsed: URL
    try {
      parsed = new URL(remote)
    } catch {
      throw new UsageError(`--url must be an http(s) URL, not "${remote}"`)
    }
    if (!/^https?:$/.test(parsed.protocol)) throw new UsageError(`--url must be an http(s) URL, not "${remote}"`)
    return { kind: 'remote', url: parsed.origin + parsed.pathname.replace(/\/+$/, '') }
  }
  return { kind: 'embedded', dataDir: path.resolve(dataDir ?? env.PLAZA_DATA_DIR ?? './.plaza') }
}

export class UsageError extends Error {}

/** undici's fetch with one shared dispatcher, loaded on the first remote call (embedded commands never pay for undici). */
let undici: Promise<{ fetch: typeof undiciFetch; dispatcher: Agent; FormData: typeof UndiciFormData }> | undefined

type UndiciParts = Pick<typeof import('undici'), 'Agent' | 'fetch' | 'FormData'>

/**
 * Loads undici once and makes its FormData the global one, as its `install()` does for all its
 * fetch classes (its advice: a FormData must come from the same undici as the fetch it goes to),
 * so that one undici serves the process. tRPC's client checks every input with `instanceof
 * FormData`, and the global FormData would otherwise load Node's own bundled copy of undici; and
 * undici's index loads that copy too (its cookies module looks at the global Headers), besides
 * WebSocket, EventSource, the cache and DNS interceptors. A remote command's start-up would pay a
 * third of its time for them: fetch, Agent and FormData are taken from the files the index exports
 * them from (the same classes), bundled into one file by the build (src/cli/vendor-undici.ts) and
 * used while it is the installed version; from the files themselves without a build; the index
 * only should a later undici move them. Commands build their forms with `remoteFormData()`.
 */
function loadUndici() {
  undici ??= (async () => {
    const require = createRequire(import.meta.url)
    const usable = (parts: UndiciParts | undefined) => typeof parts?.fetch === 'function' && typeof parts.Agent === 'function' && typeof parts.FormData === 'function'
    let parts: UndiciParts | undefined
    try {
      if (require('../vendor/undici/package.json').version === require('undici/package.json').version) parts = require('../vendor/undici/fetch.cjs')
    } catch {
      // No bundle (not built): the files below.
    }
    if (!usable(parts)) {
      try {
        parts = {
          fetch: require('undici/lib/web/fetch/index.js').fetch,
          Agent: require('undici/lib/dispatcher/agent.js'),
          FormData: require('undici/lib/web/fetch/formdata.js').FormData,
        }
      } catch {
        parts = undefined
      }
    }
    if (!usable(parts)) parts = await import('undici')
    const { fetch, Agent, FormData } = parts!
    globalThis.FormData = FormData as unknown as typeof globalThis.FormData
    // undici parses answers with llhttp, in WebAssembly. Once its parser has run a little, V8 compiles
    // it again with its optimizing compiler in the background, and the process cannot exit before
    // that compilation ends: about 70 ms after a one-shot command's output, most of what is left of a
    // remote command's start-up beyond loading. A larger tiering budget (100 times V8's default)
    // leaves parsers on the baseline compiler unless they parse a lot (a long download or stream).
    const v8 = require('node:v8') as typeof import('node:v8')
    v8.setFlagsFromString('--wasm-tiering-budget=180000000')
    return { fetch, FormData, dispatcher: new Agent({ connect: { timeout: 5_000 } }) }
  })()
  return undici
}

/** A FormData for a remote request, of the same undici as `remoteFetch`. */
export async function remoteFormData(): Promise<UndiciFormData> {
  return new (await loadUndici()).FormData()
}

/** Connections to a server that is not there fail within seconds instead of hanging. */
export const remoteFetch: typeof undiciFetch = async (input, init) => {
  const { fetch, dispatcher } = await loadUndici()
  return fetch(input, { ...init, dispatcher })
}

/** The one line for a server that does not answer at all: `cannot reach URL: ECONNREFUSED`. */
export function unreachable(url: string, error: unknown): Error {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return new Error(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`)
}

/** `remoteFetch` for a command talking to the server at `url`, a failure to connect reported as `unreachable` says. */
export async function reach(url: string, ...request: Parameters<typeof undiciFetch>): ReturnType<typeof undiciFetch> {
  try {
    return await remoteFetch(...request)
  } catch (error) {
    throw unreachable(url, error)
  }
}

/**
 * The content type of a server's 2xx answer; for any other status, the server's own message
 * (a 400 as a UsageError when `usageOn400`: the input was refused), or a line saying this is not a Plaza answer.
 */
export async function answerType(url: string, response: Awaited<ReturnType<typeof undiciFetch>>, usageOn400 = false): Promise<string> {
  const type = response.headers.get('content-type') ?? ''
  if (response.ok) return type
  const body = type.includes('json') ? ((await response.json().catch(() => null)) as { message?: string } | null) : null
  const message = body?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`
  throw usageOn400 && response.status === 400 ? new UsageError(message) : new Error(message)
}

export interface PlazaClient {
  target: Target
  trpc: TRPCClient<AppRouter>
  /** The in-process services when embedded (for uploads and binary answers); null when remote. */
  services: Services | null
  close(): Promise<void>
}

/** `userAgent` names the CLI to the server, which shows it in the session list (`plaza social sessions`). */
export async function createPlazaClient(target: Target, getToken: () => string | null, userAgent = 'plaza-cli'): Promise<PlazaClient> {
  if (target.kind === 'remote') {
    await loadUndici()
    const trpc = createTRPCClient<AppRouter>({
      links: [
        httpLink({
          url: `${target.url}/trpc`,
          fetch: remoteFetch as never,
          headers: () => {
            const token = getToken()
            return token ? { authorization: `Bearer ${token}`, 'user-agent': userAgent } : { 'user-agent': userAgent }
          },
        }),
      ],
    })
    return { target, trpc, services: null, close: async () => {} }
  }
  // Embedded: load the server only now, so remote commands don't pay for it.
  // The router whose sub-routers load on first call: a command pays only for the procedures it calls.
  const [{ lazyAppRouter }, { createServices }, { loadConfig }, { createLogger, silentLogger }] = await Promise.all([
    import('../server/lazy-router.js'),
    import('../server/services.js'),
    import('../server/config.js'),
    import('../server/logger.js'),
  ])
  const config = loadConfig({ dataDir: target.dataDir, rateLimits: false })
  // A command's stderr is for its own message: only the server's error events are worth a line there.
  const logger = createLogger()
  // No start-up sweep and no reader workers for a one-shot command: the server (or the next one) sweeps, and one request has nothing to run beside it.
  const services = await createServices(config, { logger: { ...silentLogger, error: logger.error }, maintenance: false, readers: false })
  const origin = config.publicUrl ?? `http://${config.host}:${config.port}`
  const trpc = createTRPCClient<AppRouter>({
    links: [
      localLink({
        router: lazyAppRouter,
        createContext: async () => ({ services, token: getToken(), clientAddress: 'local', origin, userAgent }),
      }),
    ],
  })
  return { target, trpc, services, close: () => services.close() }
}
