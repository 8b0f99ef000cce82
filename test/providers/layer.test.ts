/**
 * The provider layer on its own, against loopback servers: retries with Retry-After honoured (the
 * layer's sleep is injected and recorded, so nothing waits), the cap past which the fallback is
 * tried, timeouts, 5xx then fallback, malformed JSON, bounded bodies, and keys scrubbed from
 * errors and logs.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadProvidersConfig } from '../../src/server/providers/config.js'
import { ProviderError } from '../../src/server/providers/errors.js'
import { createProviderLayer, type LayerOptions } from '../../src/server/providers/layer.js'
import type { Logger } from '../../src/server/logger.js'
import { getWeather } from '../../src/server/catalog/weather/http.js'
import { hang, json, startFakeProviders, type FakeProviders } from './fake-providers.js'

let fake: FakeProviders
test.before(async () => void (fake = await startFakeProviders()))
test.after(() => fake.close())
test.before.each(() => void (fake.requests.length = 0))

function recordingLogger() {
  const lines: string[] = []
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`)
  const logger = { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') } as unknown as Logger
  return { logger, lines }
}

/** A layer whose weather target is `PLAZA_WEATHER_*` at the fake, its sleeps recorded instead of waited and its jitter fixed. */
function weatherLayer(env: NodeJS.ProcessEnv, options: LayerOptions = {}) {
  const sleeps: number[] = []
  const layer = createProviderLayer(loadProvidersConfig({ PLAZA_WEATHER_GEOCODING_URL: fake.url, ...env }), {
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 1,
    ...options,
  })
  return { layer, sleeps }
}

const berlin = { location: 'Berlin', units: 'metric' as const }

test('429 with Retry-After, then success: retried after exactly the time asked', async () => {
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  fake.enqueue(json(429, { reason: 'slow down' }, { 'retry-after': '3' }))
  const answer = await getWeather(layer, berlin)
  assert.is(answer.location.name, 'Berlin')
  assert.equal(sleeps, [3000])
  assert.equal(fake.requests.map((r) => r.path), ['/v1/search', '/v1/search', '/v1/forecast'])
  await layer.close()
})

test('Retry-After as an HTTP date is honoured; one beyond the cap moves on to the fallback without waiting', async () => {
  const soon = new Date(Date.now() + 5000).toUTCString()
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  fake.enqueue(json(503, { reason: 'maintenance' }, { 'retry-after': soon }))
  await getWeather(layer, berlin)
  assert.is(sleeps.length, 1)
  assert.ok(sleeps[0] > 3000 && sleeps[0] <= 5000, String(sleeps[0]))
  await layer.close()

  // Two targets (as a file's list would give): the first asks for an hour, so the second is tried at once.
  const config = loadProvidersConfig({ PLAZA_WEATHER_BASE_URL: `${fake.url}/first`, PLAZA_WEATHER_GEOCODING_URL: `${fake.url}/first` })
  config.services.get('weather')!.push({ ...config.services.get('weather')![0], name: 'weather.0', baseUrl: `${fake.url}/second`, options: { geocoding_url: `${fake.url}/second` } })
  const recorded: number[] = []
  const two = createProviderLayer(config, { sleep: async (ms) => void recorded.push(ms) })
  fake.requests.length = 0
  fake.enqueue(json(429, { reason: 'quota' }, { 'retry-after': '3600' }))
  await getWeather(two, berlin)
  assert.equal(recorded, [])
  assert.equal(fake.requests.map((r) => r.path), ['/first/v1/search', '/second/v1/search', '/second/v1/forecast'])
  await two.close()
})

test("hosted inference's 503 with estimated_time (a model loading) is waited for like a Retry-After", async () => {
  const sleeps: number[] = []
  const layer = createProviderLayer(loadProvidersConfig({ PLAZA_IMAGES_BASE_URL: fake.url, PLAZA_IMAGES_PROTOCOL: 'hf-inference' }), { sleep: async (ms) => void sleeps.push(ms) })
  fake.enqueue(json(503, { error: 'Model black-forest-labs/FLUX.1-schnell is currently loading', estimated_time: 4.5 }))
  const { value } = await layer.call('images', async (call) => (await call.request({ url: `${call.target.baseUrl}/models/x`, headers: {}, body: { json: { inputs: 'a' } } })).bytes(1 << 20))
  assert.ok(value.length > 0)
  assert.equal(sleeps, [4500])
  await layer.close()
})

test('5xx: retried with backoff up to max_retries, then 502 naming the status and how many were tried', async () => {
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  fake.enqueue(json(500, { reason: 'a' }), json(502, 'Bad Gateway'), json(500, { reason: 'c' }))
  const error = await getWeather(layer, berlin).catch((e) => e)
  assert.instance(error, ProviderError)
  assert.is(error.status, 502)
  assert.is(error.code, 'BAD_GATEWAY')
  assert.match(error.message, /weather provider env \(open-meteo\) answered 500: c/)
  // Base 250 ms doubled, with the jitter at its top (random() = 1).
  assert.equal(sleeps, [250, 500])
  assert.is(fake.requests.length, 3)
  await layer.close()
})

test('a 4xx other than 429 is not retried; malformed JSON is not retried', async () => {
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  fake.enqueue(json(400, { reason: 'bad query' }))
  assert.match((await getWeather(layer, berlin).catch((e) => e)).message, /answered 400: bad query/)
  fake.enqueue(json(200, 'not json at all'))
  assert.match((await getWeather(layer, berlin).catch((e) => e)).message, /not JSON/)
  assert.equal(sleeps, [])
  assert.is(fake.requests.length, 2)
  await layer.close()
})

test('a provider that does not answer in time: 504 after its timeout_ms, each retry not retried', async () => {
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url, PLAZA_WEATHER_TIMEOUT_MS: '150' })
  fake.enqueue(hang)
  const error = await getWeather(layer, berlin).catch((e) => e)
  assert.instance(error, ProviderError)
  assert.is(error.status, 504)
  assert.is(error.code, 'GATEWAY_TIMEOUT')
  assert.match(error.message, /did not answer within 150 ms/)
  // A timeout is not retried (the provider may be working on it): straight to the fallback, here none.
  assert.is(sleeps.length, 0)
  await layer.close()
})

test('the caller going away aborts the upstream call: the provider sees the connection close, nothing is retried', async () => {
  const { layer, sleeps } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  let arrived!: () => void
  const reached = new Promise<void>((resolve) => (arrived = resolve))
  const closed = new Promise<void>((resolve) => fake.enqueue((req) => {
    req.socket.on('close', () => resolve())
    arrived()
  }))
  const controller = new AbortController()
  const call = getWeather(layer, berlin, controller.signal).catch((e) => e)
  await reached
  controller.abort()
  const error = await call
  assert.is(error.constructor.name, 'ClientAbortError')
  await closed
  assert.equal(sleeps, [])
  assert.is(fake.requests.length, 1)
  await layer.close()
})

test('keys are scrubbed from the error and from every log line, even when the upstream echoes them', async () => {
  const { logger, lines } = recordingLogger()
  const { layer } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url, PLAZA_WEATHER_API_KEY: 'om-SECRET-31337' }, { logger })
  fake.enqueue(json(503, { error: { message: 'key om-SECRET-31337 is over quota' } }), json(403, { error: 'key om-SECRET-31337 refused' }))
  const error = await getWeather(layer, berlin).catch((e) => e)
  assert.is(error.status, 502)
  assert.match(error.message, /key \[redacted\] refused/)
  assert.ok(lines.length >= 2)
  for (const line of [error.message, ...lines]) assert.not.match(line, /om-SECRET-31337/)
  assert.ok(lines.some((line) => line.includes('[redacted] is over quota')))
  // The key reached the provider, as Open-Meteo's customer API takes it.
  assert.is(fake.requests[0].query.get('apikey'), 'om-SECRET-31337')
  await layer.close()
})

test('bounded bodies: an answer past the limit fails the call instead of filling memory', async () => {
  const { layer } = weatherLayer({ PLAZA_WEATHER_BASE_URL: fake.url })
  fake.enqueue(json(200, { results: [{ name: 'x'.repeat(2 * 1024 * 1024), latitude: 1, longitude: 2 }] }))
  const error = await getWeather(layer, berlin).catch((e) => e)
  assert.is(error.status, 502)
  assert.match(error.message, /answered more than 1 MiB/)
  await layer.close()
})

test('an unconfigured service is 503 with what to set; errors other than upstream ones pass through untouched', async () => {
  const layer = createProviderLayer(loadProvidersConfig({}))
  const error = await layer.call('images', async () => 1).catch((e) => e)
  assert.instance(error, ProviderError)
  assert.is(error.status, 503)
  assert.match(error.message, /set PLAZA_IMAGES_BASE_URL \(and PLAZA_IMAGES_API_KEY if it needs one, PLAZA_IMAGES_PROTOCOL=openai-images\|automatic1111\|hf-inference\)/)
  // Weather has Open-Meteo's public API as its default: configured with nothing set.
  assert.ok(layer.configured('weather'))
  const own = new Error('not an upstream failure')
  assert.is(await layer.call('weather', async () => Promise.reject(own)).catch((e) => e), own)
})

test.run()
