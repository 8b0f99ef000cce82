/**
 * The load side of bench/social.ts: starts `plaza serve` and the bare baseline as their own
 * processes, captures one real Plaza answer for the baseline to serve, drives either server with
 * autocannon (each request built by a function, so every request can carry another user's token
 * or post id), waits for Plaza's deferred fan-out to catch up, and reads a process's peak RSS
 * from /proc. Loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Database from 'libsql'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface Server {
  url: string
  pid: number
  /** Every pid that serves (the cluster's workers too), for RSS. */
  pids(): number[]
  stop(): Promise<void>
}

export interface BareServer extends Server {
  /** Makes the baseline answer every request with `answer` from now on. */
  serve(answer: Answer): Promise<void>
}

export interface Answer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  headers?: Record<string, string>
  body?: string
}

function waitForListening(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        resolve(match[1])
      }
    }
    child.stdout!.on('data', onData)
    child.once('error', reject)
    child.once('exit', (code, signal) => reject(new Error(`${what} exited before listening (${signal ?? `code ${code}`}): ${output.slice(-500)}`)))
  })
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000)
      child.once('exit', () => (clearTimeout(force), resolve()))
      child.kill('SIGTERM')
    })
}

/** The children of `pid` (cluster workers), from /proc. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * `plaza serve` from the build (run `npm run build` first), on an ephemeral loopback port, without
 * rate limits, logging warnings only (the access log's stderr line per request is left out).
 * `PLAZA_BENCH_NODE_ARGS` adds node flags to it (for a profile: `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
/**
 * Starts `plaza serve` on `dataDir`. Rate limits are off unless `rateLimits` gives them
 * (PLAZA_RATE_LIMITS syntax, e.g. `default=1000000`: counted as in production, never refusing).
 */
export async function startPlaza(dataDir: string, options: { workers?: number; env?: Record<string, string>; rateLimits?: string } = {}): Promise<Server> {
  const nodeArgs = process.env.PLAZA_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const limits = options.rateLimits === undefined ? ['--no-rate-limits'] : []
  const args = [...nodeArgs, path.join(ROOT, 'bin/run.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, ...limits, '--workers', String(options.workers ?? 1)]
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PLAZA_LOG_LEVEL: 'warn', ...(options.rateLimits === undefined ? {} : { PLAZA_RATE_LIMITS: options.rateLimits }), ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await waitForListening(child, 'plaza serve')
  return { url, pid: child.pid!, pids: () => [child.pid!, ...childPids(child.pid!)], stop: stopper(child) }
}

export async function startBare(): Promise<BareServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/lib/bare-server.ts')], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    cwd: ROOT,
  })
  const url = await waitForListening(child, 'bare server')
  return {
    url,
    pid: child.pid!,
    pids: () => [child.pid!],
    stop: stopper(child),
    serve: (answer) =>
      new Promise((resolve) => {
        const onMessage = (message: { type?: string }) => {
          if (message?.type !== 'ready') return
          child.off('message', onMessage)
          resolve()
        }
        child.on('message', onMessage)
        child.send({ type: 'answer', answer: { status: answer.status, headers: answer.headers, body: answer.body.toString('base64') } })
      }),
  }
}

/** Headers a server writes per connection or per moment; the baseline writes its own. */
const HOP_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'])

/** One real request, its answer kept byte for byte (minus per-connection headers) for the baseline. */
export function capture(baseUrl: string, spec: RequestSpec): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...spec.headers }
    if (spec.body !== undefined) headers['content-length'] = String(Buffer.byteLength(spec.body))
    const req = http.request(baseUrl + spec.path, { method: spec.method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const kept: Record<string, string> = {}
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]
          if (!HOP_HEADERS.has(name.toLowerCase())) kept[name] = res.rawHeaders[i + 1]
        }
        resolve({ status: res.statusCode!, headers: kept, body: Buffer.concat(chunks) })
      })
    })
    req.on('error', reject)
    req.end(spec.body)
  })
}

/**
 * Waits until the server has worked off what earlier load left queued (autocannon drops the
 * requests in flight when a round ends, but the server still answers them): `probe` must answer
 * within `fastMs` twice in a row. Returns the milliseconds waited (at most `maxMs`).
 */
export async function settle(baseUrl: string, probe: RequestSpec, options: { fastMs?: number; maxMs?: number } = {}): Promise<number> {
  const fastMs = options.fastMs ?? 100
  const maxMs = options.maxMs ?? 120_000
  const started = performance.now()
  let fast = 0
  while (fast < 2 && performance.now() - started < maxMs) {
    const t = performance.now()
    await capture(baseUrl, probe)
    fast = performance.now() - t < fastMs ? fast + 1 : 0
    if (fast < 2) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return performance.now() - started
}

/** Plaza's deferred work left (domain/fanout.ts). */
interface Backlog {
  /** Posts past the fan-out cursor. */
  posts: number
  /** Follows whose timeline backfill is pending (`timeline_backfills`; none on a database older than migration 0014). */
  backfills: number
}

/**
 * The posts stored but not yet fanned out into timelines (the id span between the fan-out's cursor
 * and the newest post, two O(1) lookups) and the follows not yet backfilled, in the database file.
 */
function fanoutBacklog(db: InstanceType<typeof Database>): Backlog {
  const posts = (db.prepare('SELECT max((SELECT max(id) FROM posts) - (SELECT post_id FROM timeline_fanout), 0) AS n').get() as { n: number }).n
  const hasBackfills = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'timeline_backfills'").get() !== undefined
  const backfills = hasBackfills ? (db.prepare('SELECT count(*) AS n FROM timeline_backfills').get() as { n: number }).n : 0
  return { posts, backfills }
}

/**
 * Waits until Plaza has fanned out every post it stored and backfilled every follow it made (its
 * runner does both after the answers, in the background), polling the database file on a
 * read-only connection, so that nothing measured next (the bare baseline, another endpoint) runs
 * beside Plaza's deferred work. Returns the backlog found and the milliseconds its drain took (at
 * most `maxMs`).
 */
export async function waitForFanout(dbFile: string, options: { maxMs?: number } = {}): Promise<Backlog & { ms: number }> {
  const maxMs = options.maxMs ?? 600_000
  const db = new Database(dbFile, { readonly: true })
  try {
    const started = performance.now()
    const found = fanoutBacklog(db)
    for (let left = found; (left.posts > 0 || left.backfills > 0) && performance.now() - started < maxMs; left = fanoutBacklog(db)) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return { ...found, ms: performance.now() - started }
  } finally {
    db.close()
  }
}

export interface LoadOptions {
  seconds: number
  connections: number
  /** A hard cap on requests in the round, besides the time. */
  maxRequests: number
  next: () => RequestSpec
}

/** One timed round against `baseUrl`; the raw result, for `aggregate` across rounds. */
export async function runRound(baseUrl: string, options: LoadOptions): Promise<autocannon.Result> {
  const started = performance.now()
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    duration: options.seconds,
    maxOverallRequests: options.maxRequests,
    timeout: 30,
    skipAggregateResult: true,
    requests: [
      {
        setupRequest: (request) => {
          const spec = options.next()
          return { ...request, method: spec.method, path: spec.path, headers: { ...spec.headers }, body: spec.body }
        },
      },
    ],
  } as autocannon.Options)
  ;(result as RoundResult).wallSeconds = (performance.now() - started) / 1000
  return result
}

type RoundResult = autocannon.Result & { wallSeconds: number }

export interface Measured {
  requests: number
  seconds: number
  perSecond: number
  p50: number
  p99: number
  non2xx: number
  errors: number
  statusCodes: Record<string, number>
}

/** Rounds of one server summed: requests over the rounds' total time; percentiles from the merged histogram. */
export function aggregate(rounds: autocannon.Result[], connections: number): Measured {
  const merged = (autocannon as unknown as { aggregateResult(r: autocannon.Result[], o: object): autocannon.Result }).aggregateResult(rounds, { url: 'http://127.0.0.1', connections })
  const requests = rounds.reduce((sum, r) => sum + (r as unknown as { totalCompletedRequests: number }).totalCompletedRequests, 0)
  const seconds = rounds.reduce((sum, r) => sum + (r as RoundResult).wallSeconds, 0)
  const statusCodes: Record<string, number> = {}
  for (const r of rounds) for (const [code, stat] of Object.entries((r as unknown as { statusCodeStats: Record<string, { count: number }> }).statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + stat.count
  return {
    requests,
    seconds,
    perSecond: requests / seconds,
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    non2xx: merged.non2xx,
    errors: merged.errors + merged.timeouts,
    statusCodes,
  }
}

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Peak RSS (VmHWM) summed over the processes, in bytes. */
export function peakRss(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + statusField(pid, 'VmHWM'), 0)
}

export function currentRss(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + statusField(pid, 'VmRSS'), 0)
}

/**
 * Resets the peak-RSS mark (`echo 5 > /proc/PID/clear_refs`, Linux 4.0+), so each endpoint's peak
 * is its own; false where the kernel refuses (the peak is then the process's since start).
 */
export function resetPeakRss(pids: number[]): boolean {
  let ok = true
  for (const pid of pids) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5')
    } catch {
      ok = false
    }
  }
  return ok
}
