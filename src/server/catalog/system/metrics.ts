/**
 * `GET /metrics` (the Prometheus text format) and `GET /api/metrics` (the same figures as JSON for
 * people): both read one collection of the whole server's figures (metrics/recorder.ts), and the
 * text is rendered from that JSON, so the two forms agree. docs/metrics.md names every figure.
 */
import { Registry } from 'prom-client'
import { sendJson } from '../../http.js'
import { admitMetricsReader, collectOr503 } from '../../metrics/access.js'
import { renderMetricsText, type MetricFamily } from '../../metrics/cluster.js'
import type { Exchange } from '../../rest/adapter.js'

export async function handleMetricsText({ res, ctx }: Exchange): Promise<void> {
  const metrics = admitMetricsReader({ res, ctx })
  const text = await renderMetricsText(await collectOr503(metrics))
  res.writeHead(200, { 'content-type': Registry.PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
  res.end(text)
}

/** A sample as the text format would print it: the full sample name (`..._bucket`), its labels, its value. */
function readable(family: MetricFamily) {
  return {
    name: family.name,
    help: family.help,
    type: family.type,
    samples: family.values.map((sample) => ({ name: sample.metricName ?? family.name, labels: sample.labels, value: sample.value })),
  }
}

export async function handleMetricsJson({ res, ctx }: Exchange): Promise<void> {
  const metrics = admitMetricsReader({ res, ctx })
  const families = await collectOr503(metrics)
  sendJson(res, 200, { message: 'Metrics', metrics: families.map(readable) }, { 'cache-control': 'no-store' })
}
