/**
 * The per-request figures (requests by route template, method and status; their latency
 * histogram), kept in plain arrays rather than prom-client metrics: a prom-client `inc` or
 * `observe` builds a label key string on every call (about 1-2 µs each on a busy machine), while
 * here a request costs two map lookups and a few array slots. They are turned into prom-client's
 * JSON shape only when read, and join the registry's other figures there.
 */
import type { MetricFamily } from './cluster.js'
import { BUCKET_COUNT, bucketOf, LATENCY_BOUNDS_SECONDS } from './latency.js'
import type { Tally } from './operation-stats.js'

/** The figures' names, which /api/stats reads its since-start figures from. */
export const REQUESTS_TOTAL = 'plaza_http_requests_total'
export const REQUEST_DURATION = 'plaza_http_request_duration_seconds'

/** The route label of requests no route matched (404s, refused methods): one label, whatever the path. */
const UNMATCHED_ROUTE = 'unmatched'

/** Methods that get their own label; anything else (a WebDAV verb) is `OTHER`. */
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

interface Series {
  method: string
  route: string
  /** Requests per latency bucket (not cumulative). */
  buckets: Float64Array
  seconds: number
  statuses: Map<number, number>
  /** Where a catalog operation's calls are also counted for the all-time statistics. */
  tally: Tally | null
}

interface RouteSeries {
  label: string
  methods: Map<string, Series>
}

export interface RequestFigures {
  record(method: string, route: string | null, status: number, ms: number): void
  /** Only these tRPC procedures become route labels (`/trpc/<name>`): a client cannot invent new ones. */
  knowProcedures(names: Iterable<string>): void
  /** Points each series at its operation's tally (or none); again whenever the tracked operations change. */
  linkTallies(tallyFor: (method: string, path: string) => Tally | null): void
  families(): MetricFamily[]
}

export function createRequestFigures(): RequestFigures {
  let procedures = new Set<string>()
  let tallyFor: (method: string, path: string) => Tally | null = () => null
  const routes = new Map<string, RouteSeries>()
  const all: Series[] = []

  /** The label of a route template: itself, except tRPC paths, which name procedures (or a batch of them). */
  function routeLabel(route: string | null): string {
    if (route === null) return UNMATCHED_ROUTE
    if (!route.startsWith('/trpc')) return route
    const names = route.slice('/trpc/'.length).split(',')
    if (!names.every((name) => procedures.has(name))) return UNMATCHED_ROUTE
    return names.length === 1 ? route : '/trpc/:batch'
  }

  function seriesFor(method: string, route: string | null): Series {
    let byRoute = routes.get(route ?? UNMATCHED_ROUTE)
    if (!byRoute) {
      const label = routeLabel(route)
      byRoute = routes.get(label) ?? { label, methods: new Map() }
      // Only labels become keys: a path a client made up must not grow the map.
      routes.set(label, byRoute)
    }
    let series = byRoute.methods.get(method)
    if (!series) {
      const label = METHOD_LABELS.has(method) ? method : 'OTHER'
      series = byRoute.methods.get(label)
      if (!series) {
        series = { method: label, route: byRoute.label, buckets: new Float64Array(BUCKET_COUNT), seconds: 0, statuses: new Map(), tally: tallyFor(label, byRoute.label) }
        byRoute.methods.set(label, series)
        all.push(series)
      }
    }
    return series
  }

  return {
    record(method, route, status, ms) {
      const series = seriesFor(method, route)
      const bucket = bucketOf(ms)
      series.buckets[bucket]++
      series.seconds += ms / 1000
      series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1)
      series.tally?.add(status, ms, bucket)
    },
    knowProcedures(names) {
      procedures = new Set(names)
    },
    linkTallies(lookup) {
      tallyFor = lookup
      for (const series of all) series.tally = lookup(series.method, series.route)
    },
    families() {
      const requests: MetricFamily['values'] = []
      const durations: MetricFamily['values'] = []
      for (const { method, route, buckets, seconds, statuses } of all) {
        for (const [status, count] of statuses) requests.push({ labels: { method, route, status: String(status) }, value: count })
        let cumulative = 0
        for (let b = 0; b < BUCKET_COUNT; b++) {
          cumulative += buckets[b]
          const le = b < LATENCY_BOUNDS_SECONDS.length ? LATENCY_BOUNDS_SECONDS[b] : '+Inf'
          durations.push({ metricName: `${REQUEST_DURATION}_bucket`, labels: { le, method, route }, value: cumulative })
        }
        durations.push({ metricName: `${REQUEST_DURATION}_sum`, labels: { method, route }, value: seconds })
        durations.push({ metricName: `${REQUEST_DURATION}_count`, labels: { method, route }, value: cumulative })
      }
      return [
        { name: REQUESTS_TOTAL, help: 'HTTP requests answered, by method, route template and status', type: 'counter', aggregator: 'sum', values: requests },
        { name: REQUEST_DURATION, help: 'Time from a request arriving to its answer finishing, by method and route template', type: 'histogram', aggregator: 'sum', values: durations },
      ]
    },
  }
}
