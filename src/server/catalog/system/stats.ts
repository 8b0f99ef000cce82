/**
 * `GET /api/stats`: calls, errors, client errors, mean and p95 latency of every offered catalog
 * operation, since the server started (every worker's requests, from the request figures of
 * /metrics) and all-time (the `operation_stats` rows, after every worker has flushed its tally).
 * Errors are answers of 500 and up; client errors 400 to 499 (docs/metrics.md).
 */
import { sendJson } from '../../http.js'
import { admitMetricsReader, collectOr503 } from '../../metrics/access.js'
import type { MetricFamily } from '../../metrics/cluster.js'
import { BUCKET_COUNT, LATENCY_BOUNDS_SECONDS } from '../../metrics/latency.js'
import { operationKey, readOperationStats, summarise, type BucketCounts } from '../../metrics/operation-stats.js'
import { REQUEST_DURATION, REQUESTS_TOTAL } from '../../metrics/request-figures.js'
import type { Exchange } from '../../rest/adapter.js'

const emptyCounts = (): BucketCounts => ({ calls: new Array(BUCKET_COUNT).fill(0), errors: 0, clientErrors: 0, totalMs: 0 })

/** Per operation (`GET /api/stats`), the request figures' counts: statuses from the counter, buckets and time from the histogram. */
function sinceStartCounts(families: MetricFamily[]): Map<string, BucketCounts> {
  const byOperation = new Map<string, BucketCounts>()
  const countsOf = (labels: Record<string, string | number>) => {
    const key = operationKey(String(labels.method), String(labels.route))
    let counts = byOperation.get(key)
    if (!counts) byOperation.set(key, (counts = emptyCounts()))
    return counts
  }
  for (const family of families) {
    if (family.name === REQUESTS_TOTAL) {
      for (const { labels, value } of family.values) {
        const status = Number(labels.status)
        if (status >= 500) countsOf(labels).errors += value
        else if (status >= 400) countsOf(labels).clientErrors += value
      }
    } else if (family.name === REQUEST_DURATION) {
      // Buckets are cumulative (`le`): a bucket's own calls are its count less the one below it.
      const cumulative = new Map<string, number[]>()
      for (const { labels, value, metricName } of family.values) {
        if (metricName === `${REQUEST_DURATION}_sum`) countsOf(labels).totalMs += value * 1000
        if (metricName !== `${REQUEST_DURATION}_bucket`) continue
        const bound = labels.le === '+Inf' ? LATENCY_BOUNDS_SECONDS.length : LATENCY_BOUNDS_SECONDS.indexOf(Number(labels.le))
        if (bound < 0) continue
        const key = operationKey(String(labels.method), String(labels.route))
        countsOf(labels)
        let row = cumulative.get(key)
        if (!row) cumulative.set(key, (row = new Array(BUCKET_COUNT).fill(0)))
        row[bound] = value
      }
      for (const [key, row] of cumulative) byOperation.get(key)!.calls = row.map((n, i) => n - (i === 0 ? 0 : row[i - 1]))
    }
  }
  return byOperation
}

export async function handleStats({ res, ctx }: Exchange): Promise<void> {
  const metrics = admitMetricsReader({ res, ctx })
  // Every worker writes its tally first: the database then holds every call answered so far.
  const sinceStart = sinceStartCounts(await collectOr503(metrics, { flush: true }))
  const allTime = await readOperationStats(ctx.services.db)
  const operations = metrics.operations.tracked().map(({ method, path }) => {
    const key = operationKey(method, path)
    return { method, path, since_start: summarise(sinceStart.get(key) ?? emptyCounts()), all_time: summarise(allTime.get(key) ?? emptyCounts()) }
  })
  sendJson(res, 200, { message: 'Call statistics', operations }, { 'cache-control': 'no-store' })
}
