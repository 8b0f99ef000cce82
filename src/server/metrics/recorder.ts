/**
 * The process's metrics (docs/metrics.md): one prom-client registry per Services, so two servers
 * in one process never share figures. The request path does no label work: each route template and
 * method gets its prom-client children once, and later requests find them in two map lookups.
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
import { createOperationStats, type OperationStats, type Tally } from './operation-stats.js'

/** The route label of requests no route matched (404s, refused methods): one label, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched'

/** The request figures' names, which /api/stats reads its since-start figures from. */
export const REQUESTS_TOTAL = 'plaza_http_requests_total'
export const REQUEST_DURATION = 'plaza_http_request_duration_seconds'

/** Methods that get their own label; anything else (a WebDAV verb) is `OTHER`. */
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

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
  describeApp(app: { operations: ReadonlyArray<{ method: string; path: string }>; procedures: Iterable<string> }): void
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

interface RouteSeries {
  label: string
  methods: Map<string, MethodSeries>
}

interface MethodSeries {
  duration: Histogram.Internal<'method' | 'route'>
  statuses: Map<number, Counter.Internal>
  labels: { method: string; route: string }
  tally: Tally | null
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

  const requestsTotal = new Counter({
    name: REQUESTS_TOTAL,
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const requestDuration = new Histogram({
    name: REQUEST_DURATION,
    help: 'Time from a request arriving to its answer finishing, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BOUNDS_SECONDS,
    registers: [registry],
  })
  let inFlight = 0
  new Gauge({
    name: 'plaza_http_requests_in_flight',
    help: 'HTTP requests being answered now',
    registers: [registry],
    collect() {
      this.set(inFlight)
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
  let procedures = new Set<string>()
  const routes = new Map<string, RouteSeries>()

  /** The label of a route template: itself, except tRPC paths, which name procedures (or a batch of them). */
  function routeLabel(route: string | null): string {
    if (route === null) return UNMATCHED_ROUTE
    if (!route.startsWith('/trpc')) return route
    const names = route.slice('/trpc/'.length).split(',')
    if (!names.every((name) => procedures.has(name))) return UNMATCHED_ROUTE
    return names.length === 1 ? route : '/trpc/:batch'
  }

  function seriesFor(method: string, route: string | null): MethodSeries {
    let series = routes.get(route ?? UNMATCHED_ROUTE)
    if (!series) {
      const label = routeLabel(route)
      series = routes.get(label) ?? { label, methods: new Map() }
      // Only labels are keys: a path a client made up must not grow the map.
      routes.set(label, series)
    }
    let bound = series.methods.get(method)
    if (!bound) {
      const label = METHOD_LABELS.has(method) ? method : 'OTHER'
      bound = series.methods.get(label)
      if (!bound) {
        const labels = { method: label, route: series.label }
        bound = { duration: requestDuration.labels(labels), statuses: new Map(), labels, tally: operations.tallyFor(label, series.label) }
        series.methods.set(label, bound)
      }
    }
    return bound
  }

  const requests: RequestObserver = {
    started() {
      inFlight++
    },
    finished(method, route, status, ms) {
      inFlight--
      const series = seriesFor(method ?? 'GET', route)
      series.duration.observe(ms / 1000)
      let counter = series.statuses.get(status)
      if (!counter) series.statuses.set(status, (counter = requestsTotal.labels({ ...series.labels, status: String(status) })))
      counter.inc()
      series.tally?.add(status, ms)
    },
  }

  const reportHere = async (flush: boolean) => {
    if (flush) await operations.flush()
    return (await registry.getMetricsAsJSON()) as unknown as MetricFamily[]
  }
  // A lone process's figures go through the same aggregation as a cluster's, so both answer alike.
  const collectHere = async (flush: boolean) => aggregateMetrics([await reportHere(flush)])
  const link = cluster.isWorker ? joinClusterMetrics(reportHere) : null

  return {
    requests,
    operations,
    describeApp(app) {
      operations.track(app.operations)
      procedures = new Set(app.procedures)
      // Series made before now were labelled without knowing the operations: look their tallies up again.
      for (const route of routes.values()) for (const series of route.methods.values()) series.tally = operations.tallyFor(series.labels.method, series.labels.route)
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
