/**
 * The process's metrics (docs/metrics.md): one prom-client registry per Services, so two servers
 * in one process never share figures, plus the per-request figures kept in plain arrays
 * (request-figures.ts), since those are the ones recorded on every request.
 */
import cluster from 'node:cluster'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { sql } from 'drizzle-orm'
import { DEFAULT_RATE_LIMITS, type ServerConfig } from '../config.js'
import type { Db } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { RateLimitClass } from '../rate-limit.js'
import type { RequestObserver } from '../request-log.js'
import { aggregateMetrics, joinClusterMetrics, type MetricFamily } from './cluster.js'
import { LATENCY_BOUNDS_SECONDS } from './latency.js'
import { createOperationStats, type OperationStats } from './operation-stats.js'
import { createRequestFigures } from './request-figures.js'

/** How a chat upstream call ended: `ok`, `http_<status>`, `timeout`, `network` or `protocol`. */
export type UpstreamOutcome = 'ok' | 'timeout' | 'network' | 'protocol' | `http_${number}`

/** How a code-image render ended: drawn, refused as bad input (400/413), refused as busy or too slow (503), or failed. */
export type RenderOutcome = 'ok' | 'rejected' | 'unavailable' | 'failed'

export interface Metrics {
  /** Fed by the access log's hooks (request-log.ts). */
  requests: RequestObserver
  /** The catalog operations' all-time tallies, flushed to the database. */
  operations: OperationStats
  /**
   * What the app serves: its catalog operations (tallied for /api/stats) and its tRPC procedures
   * (the only route labels taken from a path, so a client cannot invent new ones).
   */
  describeApp(app: {
    operations: ReadonlyArray<{ method: string; path: string }>
    procedures: Iterable<string>
    /** The server's connections: how many are open, how many the per-address cap refused. */
    connections?: { readonly open: number; readonly refused: number }
  }): void
  rateLimited(kind: RateLimitClass): void
  upstreamCall(provider: string, outcome: UpstreamOutcome): void
  codeImageRender(outcome: RenderOutcome, seconds: number): void
  /**
   * The whole server's figures: this process's, or under `--workers` every worker's summed by the
   * primary. `flush` writes the call statistics first (every worker's), for an exact all-time read.
   */
  collect(options?: { flush?: boolean }): Promise<MetricFamily[]>
  close(): Promise<void>
}

/** The database's size: the file and its WAL for a local database, pages × page size for a libsql server. */
async function databaseSize(config: ServerConfig, db: Db): Promise<Array<[part: 'main' | 'wal', bytes: number]>> {
  if (config.databaseUrl) {
    const [{ page_count }] = await db.all<{ page_count: number }>(sql`PRAGMA page_count`)
    const [{ page_size }] = await db.all<{ page_size: number }>(sql`PRAGMA page_size`)
    return [['main', page_count * page_size]]
  }
  const file = path.join(config.dataDir, 'plaza.db')
  const size = (name: string) => stat(name).then((s) => s.size, () => 0)
  return [
    ['main', await size(file)],
    ['wal', await size(`${file}-wal`)],
  ]
}

export function createMetrics(options: { config: ServerConfig; db: Db; logger: Logger }): Metrics {
  const { config, db, logger } = options
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const requestFigures = createRequestFigures()
  let inFlight = 0
  new Gauge({
    name: 'plaza_http_requests_in_flight',
    help: 'HTTP requests being answered now',
    registers: [registry],
    collect() {
      this.set(inFlight)
    },
  })
  let connections: { readonly open: number; readonly refused: number } | undefined
  new Gauge({
    name: 'plaza_http_connections',
    help: 'Client connections open now',
    registers: [registry],
    collect() {
      this.set(connections?.open ?? 0)
    },
  })
  new Counter({
    name: 'plaza_http_connections_refused_total',
    help: 'Connections refused because their address held PLAZA_MAX_CONNECTIONS_PER_ADDRESS already',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(connections?.refused ?? 0)
    },
  })
  const rateLimitRefusals = new Counter({
    name: 'plaza_rate_limit_refusals_total',
    help: 'Requests refused with 429 by a rate limit, by class',
    labelNames: ['class'] as const,
    registers: [registry],
  })
  for (const kind of Object.keys(DEFAULT_RATE_LIMITS)) rateLimitRefusals.inc({ class: kind }, 0)
  const upstreamCalls = new Counter({
    name: 'plaza_upstream_calls_total',
    help: 'Calls to chat providers (each retry and fallback is a call), by provider name and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  })
  const renders = new Counter({
    name: 'plaza_codeimage_renders_total',
    help: 'Code-image renders, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  for (const outcome of ['ok', 'rejected', 'unavailable', 'failed']) renders.inc({ outcome }, 0)
  const renderDuration = new Histogram({
    name: 'plaza_codeimage_render_duration_seconds',
    help: 'Time to validate and render a code image (queueing included), whatever the outcome',
    buckets: LATENCY_BOUNDS_SECONDS,
    registers: [registry],
  })
  new Gauge({
    name: 'plaza_database_size_bytes',
    help: 'Size of the database: the file (main) and its write-ahead log (wal); pages x page size for a libsql server',
    labelNames: ['part'] as const,
    // Every worker sees the same database: the largest reading, not a sum.
    aggregator: 'max',
    registers: [registry],
    async collect() {
      try {
        for (const [part, bytes] of await databaseSize(config, db)) this.set({ part }, bytes)
      } catch (error) {
        logger.warn('reading the database size failed', { error: String(error) })
      }
    },
  })

  const operations = createOperationStats(db, {
    background: true,
    onError: (error) => logger.warn('recording call statistics failed', { error: String(error) }),
  })
  const requests: RequestObserver = {
    started() {
      inFlight++
    },
    finished(method, route, status, ms) {
      inFlight--
      requestFigures.record(method ?? 'GET', route, status, ms)
    },
  }

  const reportHere = async (flush: boolean) => {
    if (flush) await operations.flush()
    return [...requestFigures.families(), ...((await registry.getMetricsAsJSON()) as unknown as MetricFamily[])]
  }
  // A lone process's figures go through the same aggregation as a cluster's, so both answer alike.
  const collectHere = async (flush: boolean) => aggregateMetrics([await reportHere(flush)])
  const link = cluster.isWorker ? joinClusterMetrics(reportHere) : null

  return {
    requests,
    operations,
    describeApp(app) {
      connections = app.connections
      operations.track(app.operations)
      requestFigures.knowProcedures(app.procedures)
      requestFigures.linkTallies(operations.tallyFor)
    },
    rateLimited: (kind) => rateLimitRefusals.inc({ class: kind }),
    upstreamCall: (provider, outcome) => upstreamCalls.inc({ provider, outcome }),
    codeImageRender(outcome, seconds) {
      renders.inc({ outcome })
      renderDuration.observe(seconds)
    },
    collect: ({ flush = false } = {}) => (link ? link.collect(flush) : collectHere(flush)),
    async close() {
      link?.close()
      await operations.close()
    },
  }
}
