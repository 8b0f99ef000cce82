/** GET /api/stats and `plaza util stats`: per catalog operation, since start and all-time, kept across restarts. */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openDatabase } from '../../src/server/db/client.js'
import { operationStats } from '../../src/server/db/schema.js'
import { quantileMs } from '../../src/server/metrics/latency.js'
import { createOperationStats, readOperationStats } from '../../src/server/metrics/operation-stats.js'
import { runCli } from '../helpers/cli.js'
import { whenRecorded } from '../helpers/prometheus.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'

const TOKEN = 'stats-token-0123456789abcdef'

type Figures = { calls: number; errors: number; client_errors: number; mean_ms: number | null; p95_ms: number | null }
type Row = { method: string; path: string; since_start: Figures; all_time: Figures }

async function stats(server: TestServer): Promise<Map<string, Row>> {
  await whenRecorded(server.services)
  const res = await server.request('GET', '/api/stats')
  assert.is(res.status, 200)
  assert.is(res.body.message, 'Call statistics')
  return new Map((res.body.operations as Row[]).map((row) => [`${row.method} ${row.path}`, row]))
}

/** Two bad code images (400), one chat call with no provider configured (503), two metrics reads (200). */
async function makeCalls(server: TestServer) {
  for (let i = 0; i < 2; i++) assert.is((await server.request('POST', '/api/codeimage', { body: { codeSnippet: '' } })).status, 400)
  assert.is((await server.request('POST', '/api/chaty', { body: { messages: [{ role: 'user', content: 'Hi' }] } })).status, 503)
  for (let i = 0; i < 2; i++) assert.is((await server.request('GET', '/api/metrics')).status, 200)
}

test('p95: interpolated inside its bucket as histogram_quantile does; the open bucket gives its start', () => {
  const counts = (entries: Record<number, number>) => Array.from({ length: 12 }, (_, i) => entries[i] ?? 0)
  const cases: Array<[Record<number, number>, number | null]> = [
    [{}, null],
    [{ 0: 100 }, 4.75], // all within 0-5 ms: the 95th of 100 at 95% of the way
    [{ 2: 20 }, 24.25], // all within 10-25 ms
    [{ 0: 95, 5: 5 }, 5], // exactly 95 calls at or under 5 ms
    [{ 0: 90, 5: 10 }, 175], // half of the 100-250 ms bucket
    [{ 11: 3 }, 10000], // slower than the last bound
  ]
  for (const [entries, expected] of cases) assert.is(quantileMs(0.95, counts(entries)), expected, JSON.stringify(entries))
})

test('since start and all-time per offered operation: calls, errors (5xx) and client errors (4xx) apart, mean and p95', async () => {
  const server = await startTestServer()
  try {
    await makeCalls(server)
    const rows = await stats(server)
    const codeimage = rows.get('POST /api/codeimage')!
    assert.equal({ ...codeimage.since_start, mean_ms: null, p95_ms: null }, { calls: 2, errors: 0, client_errors: 2, mean_ms: null, p95_ms: null })
    assert.ok(codeimage.since_start.mean_ms! > 0)
    assert.ok(codeimage.since_start.p95_ms! >= codeimage.since_start.mean_ms! * 0.5)
    assert.equal(codeimage.all_time, codeimage.since_start)
    const chaty = rows.get('POST /api/chaty')!
    assert.equal([chaty.since_start.calls, chaty.since_start.errors, chaty.since_start.client_errors], [1, 1, 0])
    assert.equal([chaty.all_time.calls, chaty.all_time.errors], [1, 1])
    assert.equal([rows.get('GET /api/metrics')!.all_time.calls, rows.get('GET /api/metrics')!.all_time.errors], [2, 0])
    // Every offered operation is listed, called or not; a route outside the catalog is not.
    assert.equal(rows.get('GET /metrics')!.since_start, { calls: 0, errors: 0, client_errors: 0, mean_ms: null, p95_ms: null })
    assert.ok(rows.has('POST /api/v1/chat/completions'))
    assert.not.ok([...rows.keys()].some((key) => key.includes('/api/mobile') || key.includes('/health')))
    // The stats read is itself counted once it is answered.
    assert.is((await stats(server)).get('GET /api/stats')!.since_start.calls, 1)
  } finally {
    await server.close()
  }
})

test('all-time figures survive a restart; since-start ones begin again', async () => {
  const dataDir = tempDir()
  try {
    const first = await startTestServer({ dataDir })
    await makeCalls(first)
    await first.close()
    const second = await startTestServer({ dataDir })
    try {
      await second.request('POST', '/api/codeimage', { body: { codeSnippet: '' } })
      const codeimage = (await stats(second)).get('POST /api/codeimage')!
      assert.is(codeimage.since_start.calls, 1)
      assert.equal([codeimage.all_time.calls, codeimage.all_time.client_errors, codeimage.all_time.errors], [3, 3, 0])
      assert.ok(codeimage.all_time.p95_ms !== null)
      const chaty = (await stats(second)).get('POST /api/chaty')!
      assert.equal([chaty.since_start.calls, chaty.all_time.calls, chaty.all_time.errors], [0, 1, 1])
    } finally {
      await second.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('tallies reach the database only when flushed, as sums: two processes on one database add up', async () => {
  const dataDir = tempDir()
  const database = await openDatabase({ dataDir, readers: 0 })
  try {
    const errors: unknown[] = []
    const one = createOperationStats(database.db, { background: false, onError: (error) => errors.push(error) })
    const two = createOperationStats(database.db, { background: false, onError: (error) => errors.push(error) })
    for (const stats of [one, two]) stats.track([{ method: 'GET', path: '/api/stats' }])
    assert.is(one.tallyFor('POST', '/api/stats'), null)
    assert.is(one.tallyFor('GET', '/api/mobile/posts/feed'), null)
    one.tallyFor('GET', '/api/stats')!.add(200, 3)
    one.tallyFor('GET', '/api/stats')!.add(502, 120)
    two.tallyFor('GET', '/api/stats')!.add(404, 3)
    assert.is((await database.db.select().from(operationStats)).length, 0)
    await one.flush()
    await two.flush()
    await one.flush() // nothing new: nothing written twice
    const counts = (await readOperationStats(database.db)).get('GET /api/stats')!
    assert.equal([counts.errors, counts.clientErrors, counts.totalMs], [1, 1, 126])
    assert.equal(counts.calls.slice(0, 6), [2, 0, 0, 0, 0, 1])
    two.tallyFor('GET', '/api/stats')!.add(200, 1)
    await two.close()
    assert.is((await readOperationStats(database.db)).get('GET /api/stats')!.calls[0], 3)
    assert.equal(errors, [])
  } finally {
    await database.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('plaza util stats: a table or --json from a server (with its token), and the local all-time figures embedded', async () => {
  const dataDir = tempDir()
  try {
    const server = await startTestServer({ dataDir, env: { PLAZA_METRICS_TOKEN: TOKEN } })
    try {
      for (let i = 0; i < 2; i++) await server.request('POST', '/api/codeimage', { body: { codeSnippet: '' } })
      await whenRecorded(server.services)
      const refused = await runCli(['util', 'stats', '--url', server.url])
      assert.is(refused.code, 1)
      assert.match(refused.stderr, /PLAZA_METRICS_TOKEN/)
      const remote = await runCli(['util', 'stats', '--url', server.url, '--json'], { env: { PLAZA_METRICS_TOKEN: TOKEN } })
      assert.is(remote.code, 0, remote.stderr)
      const row = (JSON.parse(remote.stdout).operations as Row[]).find((r) => r.path === '/api/codeimage')!
      assert.equal([row.since_start.calls, row.since_start.client_errors, row.all_time.calls], [2, 2, 2])
      const table = await runCli(['util', 'stats', '--url', server.url], { env: { PLAZA_METRICS_TOKEN: TOKEN } })
      assert.is(table.code, 0, table.stderr)
      assert.match(table.stdout, /^METHOD\s+PATH\s+CALLS\s+5XX\s+4XX\s+MEAN MS\s+P95 MS\s+ALL CALLS/)
      assert.match(table.stdout, /\nPOST\s+\/api\/codeimage\s+2\s+0\s+2\s+[\d.]+\s+[\d.]+\s+2\s+0\s+2\s/)
      assert.not.ok(table.stdout.includes(TOKEN) || table.stderr.includes(TOKEN))
    } finally {
      await server.close()
    }
    const embedded = await runCli(['util', 'stats', '--data-dir', dataDir, '--json'])
    assert.is(embedded.code, 0, embedded.stderr)
    const operations = JSON.parse(embedded.stdout).operations as Array<{ path: string; since_start: null; all_time: Figures }>
    const codeimage = operations.find((r) => r.path === '/api/codeimage')!
    assert.is(codeimage.since_start, null)
    assert.equal([codeimage.all_time.calls, codeimage.all_time.client_errors], [2, 2])
    // The remote reads of the statistics count too: the refused one as a client error.
    assert.equal([operations.find((r) => r.path === '/api/stats')!.all_time.calls, operations.find((r) => r.path === '/api/stats')!.all_time.client_errors], [3, 1])
    const offline = await runCli(['util', 'stats', '--url', 'http://127.0.0.1:9'])
    assert.is(offline.code, 1)
    assert.match(offline.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('statistics are switched off with the metrics (PLAZA_METRICS=off): nothing is written', async () => {
  const dataDir = tempDir()
  try {
    const server = await startTestServer({ dataDir, env: { PLAZA_METRICS: 'off' } })
    await server.request('POST', '/api/codeimage', { body: { codeSnippet: '' } })
    assert.is((await server.request('GET', '/api/stats')).status, 503)
    await server.close()
    const database = await openDatabase({ dataDir, readers: 0 })
    assert.is((await database.db.select().from(operationStats)).length, 0)
    await database.close()
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
