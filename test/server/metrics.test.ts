/** GET /metrics and GET /api/metrics: what is recorded, under which labels, and who may read it. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig } from '../../src/server/config.js'
import { createLogger } from '../../src/server/logger.js'
import { json, reply, startFakeUpstream } from '../chat/fake-upstream.js'
import { USER_HI } from '../chat/helpers.js'
import { parsePrometheusText, sampleValue, whenRecorded, type Family } from '../helpers/prometheus.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'

const TOKEN = 'metrics-token-0123456789abcdef'
const KEY = 'sk-live-METRICS-SECRET-9876'

/** Reads /metrics once every request made so far is recorded. */
async function scrape(server: TestServer, headers: Record<string, string> = {}): Promise<{ text: string; families: Map<string, Family> }> {
  await whenRecorded(server.services)
  const res = await fetch(`${server.url}/metrics`, { headers })
  assert.is(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  return { text, families: parsePrometheusText(text) }
}

test('the text is Prometheus exposition with every figure the docs name; requests show under their route template and status, never their raw path', async () => {
  const server = await startTestServer()
  try {
    const user = await registerUser(server)
    assert.is((await server.request('GET', '/api/mobile/posts/detail/987654', { token: user.token })).status, 404)
    assert.is((await server.request('GET', '/api/mobile/posts/detail/987655?secret=query', { token: user.token })).status, 404)
    // Paths no route knows share one label, tRPC paths that name no procedure included.
    assert.is((await server.request('GET', '/no/such/path-1')).status, 404)
    assert.is((await server.request('GET', '/trpc/made.up')).status, 404)
    const { text, families } = await scrape(server)
    assert.is(sampleValue(families, 'plaza_http_requests_total', { method: 'GET', route: '/api/mobile/posts/detail/:post_id', status: '404' }), 2)
    assert.is(sampleValue(families, 'plaza_http_requests_total', { method: 'POST', route: '/api/mobile/auth/register', status: '201' }), 1)
    assert.is(sampleValue(families, 'plaza_http_requests_total', { route: 'unmatched', status: '404' }), 2)
    assert.is(sampleValue(families, 'plaza_http_request_duration_seconds_count', { method: 'GET', route: '/api/mobile/posts/detail/:post_id' }), 2)
    assert.ok(sampleValue(families, 'plaza_http_request_duration_seconds_sum', { route: '/api/mobile/posts/detail/:post_id' })! > 0)
    for (const raw of ['987654', 'secret=query', 'path-1', 'made.up', user.token]) assert.not.ok(text.includes(raw), `${raw} is not in the metrics`)
    // The scrape itself is in flight while it is counted.
    assert.is(sampleValue(families, 'plaza_http_requests_in_flight'), 1)
    for (const name of [
      'plaza_http_requests_total',
      'plaza_http_request_duration_seconds',
      'plaza_http_requests_in_flight',
      'plaza_rate_limit_refusals_total',
      'plaza_upstream_calls_total',
      'plaza_codeimage_renders_total',
      'plaza_codeimage_render_duration_seconds',
      'plaza_database_size_bytes',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(families.has(name), `${name} is reported`)
    }
    assert.is(families.get('plaza_http_request_duration_seconds')!.type, 'histogram')
    assert.ok(sampleValue(families, 'plaza_database_size_bytes', { part: 'main' })! >= 4096)
    assert.ok(sampleValue(families, 'process_resident_memory_bytes')! > 0)
  } finally {
    await server.close()
  }
})

test('a 429 shows in the rate-limit refusals of its class', async () => {
  const server = await startTestServer({ rateLimits: { ...DEFAULT_RATE_LIMITS, auth: { max: 2, windowMs: 60_000 } } })
  try {
    const login = () => server.request('POST', '/api/mobile/auth/login', { body: { email: 'nobody@example.com', password: 'password1' } })
    assert.equal([(await login()).status, (await login()).status, (await login()).status], [401, 401, 429])
    const { families } = await scrape(server)
    assert.is(sampleValue(families, 'plaza_rate_limit_refusals_total', { class: 'auth' }), 1)
    assert.is(sampleValue(families, 'plaza_rate_limit_refusals_total', { class: 'default' }), 0)
    assert.is(sampleValue(families, 'plaza_http_requests_total', { route: '/api/mobile/auth/login', status: '429' }), 1)
  } finally {
    await server.close()
  }
})

test('chat calls show as upstream calls by provider name and outcome; the key never appears', async () => {
  const fake = await startFakeUpstream(reply())
  const lines: string[] = []
  const server = await startTestServer({
    env: { PLAZA_LLM_BASE_URL: `${fake.url}/v1`, PLAZA_LLM_API_KEY: KEY, PLAZA_LLM_MODEL: 'fake-70b' },
    logger: createLogger('debug', (line) => lines.push(line)),
  })
  try {
    fake.enqueue(json(503, { error: { message: `overloaded, key ${KEY}` } }, { 'retry-after': '0' }))
    const res = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelg-4o-mini', messages: USER_HI } })
    assert.is(res.status, 200)
    const { text, families } = await scrape(server)
    assert.is(sampleValue(families, 'plaza_upstream_calls_total', { provider: 'env', outcome: 'http_503' }), 1)
    assert.is(sampleValue(families, 'plaza_upstream_calls_total', { provider: 'env', outcome: 'ok' }), 1)
    assert.not.ok(text.includes(KEY))
    const json_ = await server.request('GET', '/api/metrics')
    assert.not.ok(JSON.stringify(json_.body).includes(KEY))
  } finally {
    await server.close()
    await fake.close()
  }
})

test('code-image renders are counted by outcome, with their render time', async () => {
  // A first render loads fonts and grammars: on a busy machine that may pass the default 15 s budget.
  const server = await startTestServer()
  try {
    const ok = await server.request('POST', '/api/codeimage', { body: { codeSnippet: 'const answer = 42', language: 'typescript' } })
    assert.is(ok.status, 200)
    const bad = await server.request('POST', '/api/codeimage', { body: { codeSnippet: 'x', language: 'no-such-language' } })
    assert.is(bad.status, 400)
    const { families } = await scrape(server)
    assert.is(sampleValue(families, 'plaza_codeimage_renders_total', { outcome: 'ok' }), 1)
    assert.is(sampleValue(families, 'plaza_codeimage_renders_total', { outcome: 'rejected' }), 1)
    assert.is(sampleValue(families, 'plaza_codeimage_render_duration_seconds_count'), 2)
    assert.ok(sampleValue(families, 'plaza_codeimage_render_duration_seconds_sum')! > 0)
  } finally {
    await server.close()
  }
})

test('PLAZA_METRICS_TOKEN: 401 without it or with another, 200 with it, on all three endpoints; the token is never echoed', async () => {
  const lines: string[] = []
  const server = await startTestServer({ env: { PLAZA_METRICS_TOKEN: TOKEN }, logger: createLogger('debug', (line) => lines.push(line)) })
  try {
    for (const path of ['/metrics', '/api/metrics', '/api/stats']) {
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, { authorization: TOKEN }]) {
        const res = await fetch(server.url + path, { headers })
        const body = await res.text()
        assert.is(res.status, 401, `${path} ${JSON.stringify(headers)}`)
        assert.is(res.headers.get('www-authenticate'), 'Bearer realm="metrics"')
        assert.match(JSON.parse(body).message, /PLAZA_METRICS_TOKEN/)
        assert.not.ok(body.includes(TOKEN.slice(0, 12)))
      }
      const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${TOKEN}` } })
      assert.is(res.status, 200, path)
      assert.not.ok((await res.text()).includes(TOKEN))
    }
    assert.ok(lines.length > 0)
    assert.not.ok(lines.join('\n').includes(TOKEN.slice(0, 12)), 'the token is not in the log')
  } finally {
    await server.close()
  }
})

test('a token that is too short or holds spaces stops the start-up, without repeating it', () => {
  for (const token of ['short', 'has spaces in it but long enough']) {
    const error = (() => {
      try {
        loadConfig({}, { PLAZA_METRICS_TOKEN: token })
      } catch (caught) {
        return caught
      }
    })()
    assert.instance(error, ConfigError)
    assert.match((error as Error).message, /PLAZA_METRICS_TOKEN must be at least 16/)
    assert.not.ok((error as Error).message.includes(token))
  }
  assert.throws(() => loadConfig({}, { PLAZA_METRICS: 'sometimes' }), /PLAZA_METRICS must be on or off/)
})

test('the JSON form reports the same figures as the text form', async () => {
  const server = await startTestServer()
  try {
    await server.request('GET', '/health')
    await server.request('POST', '/api/codeimage', { body: { codeSnippet: '' } })
    const { families } = await scrape(server)
    const res = await server.request('GET', '/api/metrics')
    assert.is(res.status, 200)
    assert.is(res.body.message, 'Metrics')
    const fromJson = res.body.metrics as Array<{ name: string; help: string; type: string; samples: Array<{ name: string; labels: Record<string, string | number>; value: number | null }> }>
    assert.equal(fromJson.map((m) => m.name).sort(), [...families.keys()].sort())
    // Between the two reads only the first read's own request and the process's own figures moved.
    const moving = (name: string, labels: Record<string, string | number>) =>
      !name.startsWith('plaza_') || name.startsWith('plaza_database_size') || name.startsWith('plaza_http_requests_in_flight') || labels.route === '/metrics'
    let compared = 0
    for (const metric of fromJson) {
      const family = families.get(metric.name)!
      assert.is(metric.type, family.type)
      assert.is(metric.help, family.help)
      for (const sample of metric.samples) {
        if (moving(sample.name, sample.labels)) continue
        const labels = Object.fromEntries(Object.entries(sample.labels).map(([k, v]) => [k, v === Infinity ? '+Inf' : String(v)]))
        const match = family.samples.filter((s) => s.name === sample.name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()))
        assert.is(match.length, 1, `${sample.name} ${JSON.stringify(labels)} is in the text`)
        assert.is(match[0].value, sample.value, `${sample.name} ${JSON.stringify(labels)}`)
        compared++
      }
    }
    assert.ok(compared > 30, `compared ${compared} samples`)
    assert.is(fromJson.find((m) => m.name === 'plaza_http_requests_total')!.samples.find((s) => s.labels.route === '/health')!.value, 1)
  } finally {
    await server.close()
  }
})

test('PLAZA_METRICS=off: nothing is recorded, and the endpoints say so with 503', async () => {
  const server = await startTestServer({ env: { PLAZA_METRICS: 'off' } })
  try {
    assert.is(server.services.metrics, null)
    for (const path of ['/metrics', '/api/metrics', '/api/stats']) {
      const res = await server.request('GET', path)
      assert.is(res.status, 503)
      assert.match(res.body.message, /PLAZA_METRICS=off/)
    }
    assert.is((await server.request('GET', '/health')).status, 200)
  } finally {
    await server.close()
  }
})

test.run()
