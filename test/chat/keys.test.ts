/**
 * Gateway keys end to end, with OpenAI's npm client where a client would meet them: 401 without a
 * key once one exists, a model allow-list (403), rpm and tpm (429 + Retry-After), a token budget
 * (429 insufficient_quota), revocation, and usage per key, model and day exact after plain and
 * streamed calls to OpenAI and Anthropic upstreams. No key or hash may appear in an answer or a log line.
 */
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { hashGatewayKey, revokeGatewayKey } from '../../src/server/chat/keys/store.js'
import { KEY_CACHE_MS } from '../../src/server/chat/keys/access.js'
import { createLogger } from '../../src/server/logger.js'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { post, providerFile, readEvents, USER_HI } from './helpers.js'

interface Ctx {
  server: TestServer
  fake: FakeUpstream
  clock: ReturnType<typeof manualClock>
  logs: string[]
  /** Every answer body read in this suite, to look for keys in. */
  answers: string[]
  keys: string[]
  /** The provider file, for a second server. */
  file: string
}

const keys = suite<Ctx>('chat: gateway keys')

keys.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  const file = providerFile(`
providers:
  oa: { base_url: "${ctx.fake.url}/v1" }
  claude: { type: anthropic, base_url: "${ctx.fake.url}" }
models:
  gpt-fast: { provider: oa, model: m1 }
  claude-x: { provider: claude, model: c1 }
  chaty: { provider: oa, model: m2 }
retry: { max_retries: 0 }
`)
  ctx.file = file
  ctx.clock = manualClock(new Date('2026-03-01T23:59:00Z'))
  ctx.logs = []
  ctx.answers = []
  ctx.keys = []
  ctx.server = await startTestServer({ clock: ctx.clock.clock, env: { PLAZA_LLM_CONFIG: file }, logger: createLogger('debug', (line) => ctx.logs.push(line)) })
})
keys.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

async function createKey(ctx: Ctx, input: Parameters<Awaited<ReturnType<TestServer['services']['gatewayAccess']>>['createKey']>[0]) {
  const created = await (await ctx.server.services.gatewayAccess()).createKey(input)
  ctx.keys.push(created.key)
  return created
}

function client(ctx: Ctx, apiKey: string) {
  // Its own retries off, so that a 429 surfaces at once instead of being waited out.
  return new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey, maxRetries: 0 })
}

/** A raw call, its body kept for the no-secrets check. */
async function call(ctx: Ctx, method: string, path: string, key?: string, body?: unknown) {
  const response = await fetch(ctx.server.url + path, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  const text = await response.text()
  ctx.answers.push(text)
  return { status: response.status, headers: response.headers, body: text.startsWith('{') ? JSON.parse(text) : text }
}

const hi = { model: 'gpt-fast', messages: USER_HI }

keys('open while no key exists: calls need no key, and /api/v1/usage says usage is per key', async (ctx) => {
  const open = await call(ctx, 'POST', '/api/v1/chat/completions', undefined, hi)
  assert.is(open.status, 200)
  // OpenAI's client always sends some key: an open gateway ignores it.
  const viaClient = await client(ctx, 'anything').chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming)
  assert.is(viaClient.choices[0].message.content, 'Hello there!')
  const usage = await call(ctx, 'GET', '/api/v1/usage')
  assert.is(usage.status, 401)
  assert.is(usage.body.error.code, 'invalid_api_key')
})

keys('from the first key on (at once in-process): 401 without a key, with a wrong one, in OpenAI shape and the envelope', async (ctx) => {
  const { key, info } = await createKey(ctx, { name: 'main' })
  assert.match(key, /^sk-plaza-[A-Za-z0-9_-]{43}$/)
  assert.is((info as unknown as Record<string, unknown>).key_hash, undefined)

  const missing = await call(ctx, 'POST', '/api/v1/chat/completions', undefined, hi)
  assert.is(missing.status, 401)
  assert.equal(Object.keys(missing.body.error).sort(), ['code', 'message', 'param', 'type'])
  assert.is(missing.body.error.code, 'invalid_api_key')
  assert.is(missing.headers.get('www-authenticate'), 'Bearer')
  const wrong = await client(ctx, 'sk-plaza-not-a-real-key').chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e) => e)
  assert.instance(wrong, OpenAI.AuthenticationError)
  assert.is(wrong.code, 'invalid_api_key')
  const models = await call(ctx, 'GET', '/api/v1/models')
  assert.is(models.status, 401)
  const envelope = await call(ctx, 'POST', '/api/chaty', undefined, { messages: USER_HI })
  assert.is(envelope.status, 401)
  assert.is(envelope.body.status, 'error')
  assert.match(envelope.body.message, /requires an API key/)
  const before = ctx.fake.requests.length
  await call(ctx, 'POST', '/api/reasoning-70b', 'sk-plaza-wrong', { messages: USER_HI })
  assert.is(ctx.fake.requests.length, before, 'nothing went upstream')

  const ok = await client(ctx, key).chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming)
  assert.is(ok.choices[0].message.content, 'Hello there!')
  assert.is((await call(ctx, 'POST', '/api/chaty', key, { messages: USER_HI })).body.answer, 'Hello there!')
})

keys('a key restricted to one model: 403 model_not_allowed naming the other, and /api/v1/models lists only its own', async (ctx) => {
  const { key } = await createKey(ctx, { name: 'only-fast', models: ['gpt-fast'] })
  const openai = client(ctx, key)
  const refused = await openai.chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(refused, OpenAI.PermissionDeniedError)
  assert.is(refused.status, 403)
  assert.is(refused.code, 'model_not_allowed')
  assert.match(refused.message, /"claude-x"/)
  assert.is((await call(ctx, 'POST', '/api/chaty', key, { messages: USER_HI })).status, 403)

  const listed = await openai.models.list()
  assert.equal(listed.data.map((model) => model.id), ['gpt-fast'])
  const hidden = await openai.models.retrieve('claude-x').catch((e) => e)
  assert.instance(hidden, OpenAI.NotFoundError)
  assert.is((await openai.chat.completions.create({ model: 'gpt-fast', messages: [{ role: 'user', content: 'Hi' }] })).model, 'gpt-fast')
})

keys('rpm: the request past the limit is 429 rate_limit_exceeded with Retry-After; a minute later it passes', async (ctx) => {
  const { key } = await createKey(ctx, { name: 'rpm2', rpm: 2 })
  for (let i = 0; i < 2; i++) assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200)
  ctx.clock.advance(20_000)
  const limited = await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)
  assert.is(limited.status, 429)
  assert.is(limited.body.error.code, 'rate_limit_exceeded')
  assert.is(limited.headers.get('retry-after'), '40')
  const viaClient = await client(ctx, key).chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e) => e)
  assert.instance(viaClient, OpenAI.RateLimitError)
  assert.is(viaClient.headers.get('retry-after'), '40')
  ctx.clock.advance(40_000)
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200)
})

keys('tpm: once the last minute used the limit, 429 until those tokens leave the window', async (ctx) => {
  const { key } = await createKey(ctx, { name: 'tpm20', tpm: 20 })
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200) // 19 tokens
  ctx.clock.advance(5_000)
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200) // 38: this one crossed it
  const limited = await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)
  assert.is(limited.status, 429)
  assert.match(limited.body.error.message, /20 tokens per minute/)
  // The first call's 19 leave at 60 s, leaving 19 < 20.
  assert.is(limited.headers.get('retry-after'), '55')
  ctx.clock.advance(55_000)
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200)
})

keys('rpm and tpm hold across processes: a second server on the same database refuses what calls through the first used up', async (ctx) => {
  const other = await startTestServer({ clock: ctx.clock.clock, env: { PLAZA_LLM_CONFIG: ctx.file }, dataDir: ctx.server.dataDir })
  const through = async (server: TestServer, key: string) =>
    (await fetch(`${server.url}/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(hi) })).status
  try {
    const { key } = await createKey(ctx, { name: 'rpm2-shared', rpm: 2 })
    assert.equal([await through(ctx.server, key), await through(other, key)], [200, 200])
    assert.equal([await through(ctx.server, key), await through(other, key)], [429, 429])
    ctx.clock.advance(60_000)
    const { key: tokens } = await createKey(ctx, { name: 'tpm20-shared', tpm: 20 })
    // 19 + 19 tokens, one call on each: past 20, so neither server lets a third in. (Tokens are written
    // once a call has ended; a server's next admission waits for its own writes, hence this order.)
    assert.equal([await through(other, tokens), await through(ctx.server, tokens)], [200, 200])
    assert.equal([await through(ctx.server, tokens), await through(other, tokens)], [429, 429])
    ctx.clock.advance(60_000)
    assert.is(await through(other, key), 200)
  } finally {
    await other.close()
  }
})

keys('budget: checked before each call, usage added after it; past it 429 insufficient_quota (streamed calls count too)', async (ctx) => {
  const { key } = await createKey(ctx, { name: 'budget30', budget_tokens: 30 })
  const openai = client(ctx, key)
  await openai.chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming) // 19
  // 19 < 30, so this one runs in full and takes the key to 38.
  for await (const _chunk of await openai.chat.completions.create({ ...(hi as OpenAI.ChatCompletionCreateParamsNonStreaming), stream: true })) void _chunk
  const before = ctx.fake.requests.length
  const spent = await openai.chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e) => e)
  assert.instance(spent, OpenAI.RateLimitError)
  assert.is(spent.code, 'insufficient_quota')
  assert.is(spent.type, 'insufficient_quota')
  assert.match(spent.message, /budget of 30 tokens \(38 used\)/)
  assert.is(ctx.fake.requests.length, before, 'refused before any upstream call')
  // Still refused after the usage is written and the key's row read again.
  await (await ctx.server.services.gatewayAccess()).flush()
  ctx.clock.advance(KEY_CACHE_MS)
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).body.error.code, 'insufficient_quota')
  const usage = await call(ctx, 'GET', '/api/v1/usage', key)
  assert.is(usage.body.used_tokens, 38)
  assert.is(usage.body.budget_tokens, 30)
})

keys('usage per key, model and UTC day is exact after plain and streamed calls to OpenAI and Anthropic upstreams, and after the write', async (ctx) => {
  const { key, info } = await createKey(ctx, { name: 'metered' })
  const openai = client(ctx, key)
  ctx.clock.set(new Date('2026-03-02T10:00:00Z'))
  ctx.fake.enqueue(reply({ usage: { input: 12, output: 7 } }), reply({ usage: { input: 5, output: 3 } }), reply({ usage: { input: 10, output: 4 } }), reply({ usage: { input: 8, output: 2 } }))
  await openai.chat.completions.create({ model: 'gpt-fast', messages: [{ role: 'user', content: 'Hi' }] })
  for await (const _chunk of await openai.chat.completions.create({ model: 'gpt-fast', messages: [{ role: 'user', content: 'Hi' }], stream: true })) void _chunk
  await openai.chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }] })
  for await (const _chunk of await openai.chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }], stream: true })) void _chunk
  // A failed call: a request and an error, no tokens.
  ctx.fake.enqueue(json(500, { error: { message: 'boom' } }))
  assert.instance(await openai.chat.completions.create({ model: 'gpt-fast', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e), OpenAI.APIError)
  // A call refused by validation never reached the gateway: not counted.
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, { model: 'gpt-fast', messages: [] })).status, 400)
  // The day before, one call.
  ctx.clock.set(new Date('2026-03-01T12:00:00Z'))
  await openai.chat.completions.create({ model: 'gpt-fast', messages: [{ role: 'user', content: 'Hi' }] })
  ctx.clock.set(new Date('2026-03-02T10:00:00Z'))

  // m1 and c1 have no price: the calls cost nothing (test/chat/spend.test.ts prices them).
  const rows = [
    { day: '2026-03-01', model: 'gpt-fast', prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, cached_tokens: 0, requests: 1, errors: 0 },
    { day: '2026-03-02', model: 'claude-x', prompt_tokens: 18, completion_tokens: 6, total_tokens: 24, cached_tokens: 0, requests: 2, errors: 0 },
    { day: '2026-03-02', model: 'gpt-fast', prompt_tokens: 17, completion_tokens: 10, total_tokens: 27, cached_tokens: 0, requests: 3, errors: 1 },
  ]
  const expected = rows.map((row) => ({ ...row, cost_usd: 0 }))
  const unwritten = await call(ctx, 'GET', '/api/v1/usage', key)
  assert.is(unwritten.status, 200)
  assert.is(unwritten.body.object, 'list')
  assert.equal(unwritten.body.key, { id: info.id, name: 'metered' })
  assert.equal(unwritten.body.data, expected)
  assert.equal(unwritten.body.total, { prompt_tokens: 47, completion_tokens: 23, total_tokens: 70, cached_tokens: 0, requests: 6, errors: 1, cost_usd: 0 })
  assert.equal((await call(ctx, 'GET', '/api/v1/usage?days=1', key)).body.data, expected.slice(1))

  await (await ctx.server.services.gatewayAccess()).flush()
  const written = await call(ctx, 'GET', '/api/v1/usage', key)
  assert.equal(written.body.data, expected, 'the same once written: nothing lost, nothing twice')
  const operator = await (await ctx.server.services.gatewayAccess()).usage({ ref: 'metered', days: 30 })
  assert.equal(operator.map(({ key_id: _id, key_name: _name, ...row }) => row), rows.map((row) => ({ ...row, cost_nanos: 0 })))
  const listed = (await (await ctx.server.services.gatewayAccess()).listKeys()).find((row) => row.id === info.id)!
  assert.is(listed.used_tokens, 70)

  const bad = await call(ctx, 'GET', '/api/v1/usage?days=0', key)
  assert.is(bad.status, 400)
  assert.is(bad.body.error.param, 'days')
})

keys('revoked: 401 at once in-process, and within KEY_CACHE_MS when revoked by another process', async (ctx) => {
  const { key } = await createKey(ctx, { name: 'short-lived' })
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', key, hi)).status, 200)
  await (await ctx.server.services.gatewayAccess()).revokeKey('short-lived')
  const revoked = await client(ctx, key).chat.completions.create(hi as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e) => e)
  assert.instance(revoked, OpenAI.AuthenticationError)
  assert.match(revoked.message, /revoked/)

  // As `plaza admin keys revoke` does from its own process: straight in the database.
  const other = await createKey(ctx, { name: 'revoked-elsewhere' })
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', other.key, hi)).status, 200)
  await revokeGatewayKey(ctx.server.services.db, 'revoked-elsewhere', ctx.clock.clock())
  ctx.clock.advance(KEY_CACHE_MS)
  assert.is((await call(ctx, 'POST', '/api/v1/chat/completions', other.key, hi)).status, 401)
})

keys('no key and no key hash in any answer or log line', (ctx) => {
  assert.ok(ctx.keys.length >= 7)
  assert.ok(ctx.logs.length > 20, 'the access log was captured')
  for (const key of ctx.keys) {
    for (const secret of [key, hashGatewayKey(key), key.slice('sk-plaza-'.length)]) {
      assert.not.ok(ctx.answers.some((text) => text.includes(secret)), 'an answer holds a key or its hash')
      assert.not.ok(ctx.logs.some((line) => line.includes(secret)), 'a log line holds a key or its hash')
    }
  }
})

keys.run()

const required = suite('chat: PLAZA_GATEWAY_AUTH')

required('required: 401 before any key exists; a bad value stops the start', async () => {
  const fake = await startFakeUpstream()
  const server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${fake.url}/v1`, PLAZA_GATEWAY_AUTH: 'required' } })
  try {
    const refused = await post(`${server.url}/api/v1/chat/completions`, { messages: USER_HI })
    assert.is(refused.status, 401)
    assert.is((await refused.json()).error.code, 'invalid_api_key')
    const stream = await post(`${server.url}/api/v1/chat/completions`, { messages: USER_HI, stream: true })
    assert.is(stream.status, 401)
    assert.is(fake.requests.length, 0)
    const { key } = await (await server.services.gatewayAccess()).createKey({ name: 'first' })
    const events = await readEvents(await post(`${server.url}/api/v1/chat/completions`, { messages: USER_HI, stream: true }, { headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } }))
    assert.is(events.at(-1), '[DONE]')
  } finally {
    await server.close()
    await fake.close()
  }
  await startTestServer({ env: { PLAZA_GATEWAY_AUTH: 'maybe' } }).then(
    () => assert.unreachable('started'),
    (error) => assert.match(String(error), /PLAZA_GATEWAY_AUTH must be required or off/),
  )
})

required.run()
