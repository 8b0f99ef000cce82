/** `plaza serve --workers 2`: a scrape answered by either worker reports the whole server. */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServe } from '../helpers/cli.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.js'
import { tempDir } from '../helpers/server.js'

/** A fresh connection per request: round-robin hands successive connections to alternate workers. */
const fresh = { connection: 'close' }

/**
 * Scrapes until the scrape is the only request in flight: a worker records a request at its
 * `finish` event, which may run after the client already holds the answer.
 */
async function untilRecorded(url: string) {
  for (let i = 0; i < 100; i++) {
    const families = parsePrometheusText(await (await fetch(`${url}/metrics`, { headers: fresh })).text())
    if (sampleValue(families, 'plaza_http_requests_in_flight') === 1) return
  }
  throw new Error('requests stayed in flight')
}

test('metrics, JSON metrics and statistics sum both workers, whichever of them answers', async () => {
  const dataDir = tempDir()
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', dataDir, '--workers', '2', '--no-rate-limits'])
  try {
    for (let i = 0; i < 6; i++) assert.is((await fetch(`${url}/health`, { headers: fresh })).status, 200)
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/api/codeimage`, { method: 'POST', headers: { ...fresh, 'content-type': 'application/json' }, body: '{"codeSnippet":""}' })
      assert.is(res.status, 400)
    }
    await untilRecorded(url)
    // Each worker answered about half of those; every scrape, on either worker, counts them all.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/metrics`, { headers: fresh })
      assert.is(res.status, 200)
      const families = parsePrometheusText(await res.text())
      assert.is(sampleValue(families, 'plaza_http_requests_total', { route: '/health', status: '200' }), 6, `scrape ${i + 1}`)
      assert.is(sampleValue(families, 'plaza_codeimage_renders_total', { outcome: 'rejected' }), 3, `scrape ${i + 1}`)
      assert.ok(sampleValue(families, 'plaza_database_size_bytes', { part: 'main' })! > 0)
    }
    for (let i = 0; i < 2; i++) {
      const body = (await (await fetch(`${url}/api/metrics`, { headers: fresh })).json()) as { metrics: Array<{ name: string; samples: Array<{ labels: Record<string, string>; value: number }> }> }
      const health = body.metrics.find((m) => m.name === 'plaza_http_requests_total')!.samples.find((s) => s.labels.route === '/health')!
      assert.is(health.value, 6)
    }
    for (let i = 0; i < 2; i++) {
      const body = (await (await fetch(`${url}/api/stats`, { headers: fresh })).json()) as { operations: Array<{ path: string; since_start: { calls: number }; all_time: { calls: number; client_errors: number } }> }
      const codeimage = body.operations.find((op) => op.path === '/api/codeimage')!
      assert.is(codeimage.since_start.calls, 3)
      // Every worker wrote its tally before the database was read.
      assert.equal([codeimage.all_time.calls, codeimage.all_time.client_errors], [3, 3])
    }
  } finally {
    child.kill('SIGTERM')
    assert.is(await exited, 0)
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
