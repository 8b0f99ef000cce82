/**
 * All-time call statistics of the catalog's operations (GET /api/stats). The request path adds to
 * an in-memory tally (a few array slots, no allocation); `flush` adds every tally to the
 * `operation_stats` rows in one statement, every OPERATION_STATS_FLUSH_MS while serving and on
 * close, as sessions' last uses are written (auth/sessions.ts). Rows only ever grow by sums, so
 * processes sharing the database can flush in any order.
 */
import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { operationStats } from '../db/schema.js'
import { BUCKET_COUNT, BUCKET_STARTS_MS, bucketOf, quantileMs } from './latency.js'

/** How often a serving process writes its tallies. */
const OPERATION_STATS_FLUSH_MS = 10_000

/** One operation's calls since the last flush, per latency bucket. */
export class Tally {
  readonly calls = new Float64Array(BUCKET_COUNT)
  readonly errors = new Float64Array(BUCKET_COUNT)
  readonly clientErrors = new Float64Array(BUCKET_COUNT)
  readonly totalMs = new Float64Array(BUCKET_COUNT)
  dirty = false

  constructor(
    readonly method: string,
    readonly path: string,
  ) {}

  /** Counts one answer: an error from 500 up, a client error from 400 to 499 (a client that went away is 499). */
  add(status: number, ms: number, bucket = bucketOf(ms)) {
    this.calls[bucket]++
    this.totalMs[bucket] += ms
    if (status >= 500) this.errors[bucket]++
    else if (status >= 400) this.clientErrors[bucket]++
    this.dirty = true
  }
}

/** What GET /api/stats shows of one operation over a span (since start, or all-time). */
export interface OperationFigures {
  calls: number
  /** Answers with status 500 or more. */
  errors: number
  /** Answers with status 400 to 499. */
  client_errors: number
  /** Null before the first call. */
  mean_ms: number | null
  p95_ms: number | null
}

/** Per-bucket counts of one operation, from a tally, the database or the request histogram. */
export interface BucketCounts {
  calls: number[]
  errors: number
  clientErrors: number
  totalMs: number
}

const tenth = (ms: number) => Math.round(ms * 10) / 10

export function summarise(counts: BucketCounts): OperationFigures {
  const calls = counts.calls.reduce((sum, n) => sum + n, 0)
  const p95 = quantileMs(0.95, counts.calls)
  return {
    calls,
    errors: counts.errors,
    client_errors: counts.clientErrors,
    mean_ms: calls === 0 ? null : tenth(counts.totalMs / calls),
    p95_ms: p95 === null ? null : tenth(p95),
  }
}

/** The key of an operation in the maps below: `GET /api/stats`. */
export const operationKey = (method: string, path: string) => `${method} ${path}`

/** Every operation's all-time counts in the database (a few rows per operation: the whole table). */
export async function readOperationStats(db: Db): Promise<Map<string, BucketCounts & { method: string; path: string }>> {
  const rows = await db.select().from(operationStats)
  const byOperation = new Map<string, BucketCounts & { method: string; path: string }>()
  for (const row of rows) {
    const key = operationKey(row.method, row.path)
    let counts = byOperation.get(key)
    if (!counts) byOperation.set(key, (counts = { method: row.method, path: row.path, calls: new Array(BUCKET_COUNT).fill(0), errors: 0, clientErrors: 0, totalMs: 0 }))
    // A bucket start that is no longer a bound (the bounds changed) counts in the bucket it falls in now.
    const bucket = Math.max(0, BUCKET_STARTS_MS.findLastIndex((start) => start <= row.fromMs))
    counts.calls[bucket] += row.calls
    counts.errors += row.errors
    counts.clientErrors += row.clientErrors
    counts.totalMs += row.totalMs
  }
  return byOperation
}

export interface OperationStats {
  /** Starts tallying these operations (the offered catalog rows); the app calls it when it mounts them. */
  track(operations: ReadonlyArray<{ method: string; path: string }>): void
  /** The tracked operations, in the order they were given. */
  tracked(): Array<{ method: string; path: string }>
  /** The tally of an operation, or null when `path` is not a tracked operation for `method`. */
  tallyFor(method: string, path: string): Tally | null
  /** Adds every tally to the database in one statement; flushes run one after another. */
  flush(): Promise<void>
  close(): Promise<void>
}

type Row = [method: string, path: string, fromMs: number, calls: number, errors: number, clientErrors: number, totalMs: number]

/** Moves the tallies' counts into rows and zeroes them (synchronously: nothing recorded meanwhile is lost). */
function takeRows(tallies: Iterable<Tally>): Row[] {
  const rows: Row[] = []
  for (const tally of tallies) {
    if (!tally.dirty) continue
    tally.dirty = false
    for (let b = 0; b < BUCKET_COUNT; b++) {
      if (tally.calls[b] === 0) continue
      rows.push([tally.method, tally.path, BUCKET_STARTS_MS[b], tally.calls[b], tally.errors[b], tally.clientErrors[b], tally.totalMs[b]])
      tally.calls[b] = tally.errors[b] = tally.clientErrors[b] = tally.totalMs[b] = 0
    }
  }
  return rows
}

/** Puts rows that could not be written back into their tallies, for the next flush. */
function restoreRows(rows: Row[], tallyFor: (method: string, path: string) => Tally | null) {
  for (const [method, path, fromMs, calls, errors, clientErrors, totalMs] of rows) {
    const tally = tallyFor(method, path)
    if (!tally) continue
    const b = BUCKET_STARTS_MS.indexOf(fromMs)
    tally.calls[b] += calls
    tally.errors[b] += errors
    tally.clientErrors[b] += clientErrors
    tally.totalMs[b] += totalMs
    tally.dirty = true
  }
}

export function createOperationStats(db: Db, options: { background: boolean; onError: (error: unknown) => void }): OperationStats {
  // Keyed by path, then method: the request figures look a series' tally up once, when it is made.
  const byPath = new Map<string, Map<string, Tally>>()
  const tallyFor = (method: string, path: string) => byPath.get(path)?.get(method) ?? null
  const tallies = function* () {
    for (const methods of byPath.values()) yield* methods.values()
  }

  async function write() {
    const rows = takeRows(tallies())
    if (rows.length === 0) return
    try {
      // `WHERE true` tells SQLite's parser that ON CONFLICT belongs to the upsert, not to a join.
      await db.run(sql`
        insert into ${operationStats} (method, path, from_ms, calls, errors, client_errors, total_ms)
        select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6
        from json_each(${JSON.stringify(rows)}) where true
        on conflict (method, path, from_ms) do update set
          calls = calls + excluded.calls,
          errors = errors + excluded.errors,
          client_errors = client_errors + excluded.client_errors,
          total_ms = total_ms + excluded.total_ms`)
    } catch (error) {
      restoreRows(rows, tallyFor)
      throw error
    }
  }

  let chain: Promise<void> = Promise.resolve()
  const flush = () => {
    const run = chain.then(write)
    chain = run.catch(() => {})
    return run
  }
  const timer = options.background ? setInterval(() => void flush().catch(options.onError), OPERATION_STATS_FLUSH_MS).unref() : null

  return {
    track(operations) {
      for (const { method, path } of operations) {
        let methods = byPath.get(path)
        if (!methods) byPath.set(path, (methods = new Map()))
        if (!methods.has(method)) methods.set(method, new Tally(method, path))
      }
    },
    tracked: () => [...tallies()].map(({ method, path }) => ({ method, path })),
    tallyFor,
    flush,
    async close() {
      if (timer) clearInterval(timer)
      await flush().catch(options.onError)
    },
  }
}
