/**
 * Spend: every call's cost by the price table (the file's prices over the built-in ones), recorded
 * with its usage per key and model, whatever the wire format (chat completions, Responses,
 * Anthropic Messages, embeddings); budgets in money; OpenAI's x-ratelimit-* headers for keys with
 * limits. Driven by OpenAI's and Anthropic's own clients against loopback providers.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile } from './helpers.js'

type Ctx = { server: TestServer; fake: FakeUpstream }

const spend = suite<Ctx>('chat: spend, prices and money budgets')

spend.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  const file = providerFile(`
providers:
  oa: { base_url: "${ctx.fake.url}/v1" }
  claude: { type: anthropic, base_url: "${ctx.fake.url}" }
models:
  priced: { provider: oa, model: house-llm }
  claude-priced: { provider: claude, model: house-claude }
  list-priced: { provider: oa, model: gpt-4o-mini-2024-07-18 }
  free: { provider: oa, model: unpriced-model }
prices:
  house-llm: { input: 1, output: 2, cached_input: 0.5 }
  claude/house-claude: { input: 3, output: 15, cached_input: 0.3 }
  text-embedding-3-small: { input: 0.5, output: 0 }
retry: { max_retries: 0 }
`)
  ctx.server = await startTestServer({ clock: manualClock(new Date('2026-06-01T12:00:00Z')).clock, env: { PLAZA_LLM_CONFIG: file } })
})
spend.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

async function usageOf(server: TestServer, key: string) {
  const res = await server.request('GET', '/api/v1/usage', { token: key })
  assert.is(res.status, 200)
  return res.body
}

spend('each call costs its tokens at its model\'s prices, cached prompt tokens at the cached price, on every wire format', async ({ server, fake }) => {
  const { key } = await (await server.services.gatewayAccess()).createKey({ name: 'costed' })
  const openai = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: key, maxRetries: 0 })
  // 1000 prompt tokens (400 cached) and 500 completion tokens of house-llm: 600 × $1 + 400 × $0.5 + 500 × $2, per million.
  fake.enqueue(json(200, { id: 'c', object: 'chat.completion', created: 1, model: 'house-llm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 400 } } }))
  const answer = await openai.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(answer.usage?.prompt_tokens_details?.cached_tokens, 400, "the upstream's usage details are passed on")
  // Streamed: the last chunk's usage is priced the same way.
  fake.enqueue(reply({ usage: { input: 100, output: 10 } }))
  for await (const _chunk of await openai.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'Hi' }], stream: true })) void _chunk
  // The Responses API, translated: 12 + 7 tokens.
  await openai.responses.create({ model: 'priced', input: 'Hi' })
  // Anthropic's Messages, passed through to an Anthropic provider: its cache reads are the cached tokens.
  fake.enqueue(json(200, { id: 'msg', type: 'message', role: 'assistant', model: 'house-claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 200, cache_read_input_tokens: 800, output_tokens: 100 } }))
  const anthropic = new Anthropic({ baseURL: `${server.url}/api`, apiKey: key, maxRetries: 0 })
  await anthropic.messages.create({ model: 'claude-priced', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
  // A built-in list price, for a dated name of the model.
  await openai.chat.completions.create({ model: 'list-priced', messages: [{ role: 'user', content: 'Hi' }] })
  // Embeddings (prompt tokens only) and a model without a price.
  await openai.embeddings.create({ model: 'oa/text-embedding-3-small', input: 'one two three four' })
  await openai.chat.completions.create({ model: 'free', messages: [{ role: 'user', content: 'Hi' }] })

  const usage = await usageOf(server, key)
  const row = (model: string) => usage.data.find((entry: { model: string }) => entry.model === model)
  const micro = (usd: number) => Math.round(usd * 1e6 * 1000) / 1000
  assert.equal([row('priced').requests, row('priced').prompt_tokens, row('priced').cached_tokens, row('priced').completion_tokens], [3, 1112, 400, 517])
  // 600×1 + 400×0.5 + 500×2 = 1800; 100×1 + 10×2 = 120; 12×1 + 7×2 = 26 (micro-dollars).
  assert.is(micro(row('priced').cost_usd), 1946)
  // 200×3 + 800×0.3 + 100×15 = 2340.
  assert.equal([row('claude-priced').prompt_tokens, row('claude-priced').cached_tokens, micro(row('claude-priced').cost_usd)], [1000, 800, 2340])
  // gpt-4o-mini's list price: 12×0.15 + 7×0.6 = 6.
  assert.is(micro(row('list-priced').cost_usd), 6)
  assert.is(micro(row('oa/text-embedding-3-small').cost_usd), 2)
  assert.is(row('free').cost_usd, 0)
  assert.is(micro(usage.total.cost_usd), 1946 + 2340 + 6 + 2)
  assert.is(micro(usage.used_usd), 1946 + 2340 + 6 + 2)
  assert.is(usage.budget_usd, null)

  // The same once written, and as the operator sees it.
  const access = await server.services.gatewayAccess()
  await access.flush()
  assert.equal((await usageOf(server, key)).total, usage.total)
  const operator = await access.usage({ ref: 'costed', days: 1 })
  assert.is(operator.find((entry) => entry.model === 'priced')!.cost_nanos, 1_946_000)
  const listed = (await access.listKeys()).find((entry) => entry.name === 'costed')!
  assert.is(micro(listed.used_usd), 1946 + 2340 + 6 + 2)
})

spend('a money budget: checked before each call, the cost added after it; past it 429 insufficient_quota', async ({ server, fake }) => {
  const { key } = await (await server.services.gatewayAccess()).createKey({ name: 'three-millicents', budget_usd: 0.003 })
  const openai = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: key, maxRetries: 0 })
  // Each call: 1000 × $1 + 500 × $2 per million = $0.002.
  fake.enqueue(reply({ usage: { input: 1000, output: 500 } }), reply({ usage: { input: 1000, output: 500 } }))
  await openai.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'Hi' }] })
  await openai.responses.create({ model: 'priced', input: 'Hi' })
  const before = fake.requests.length
  const refused = await openai.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(refused, OpenAI.RateLimitError)
  assert.is(refused.code, 'insufficient_quota')
  assert.match(refused.message, /budget of \$0\.003 \(\$0\.004 spent\)/)
  assert.is(fake.requests.length, before, 'refused before any upstream call')
  const usage = await usageOf(server, key)
  assert.equal([usage.budget_usd, usage.used_usd], [0.003, 0.004])
  // Unpriced models cost nothing, but the key is past its budget for every model.
  assert.instance(await openai.chat.completions.create({ model: 'free', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e), OpenAI.RateLimitError)
})

spend("keys with rpm or tpm get OpenAI's x-ratelimit-* headers; keys without limits none", async ({ server }) => {
  const access = await server.services.gatewayAccess()
  const limited = (await access.createKey({ name: 'limited', rpm: 3, tpm: 1000 })).key
  const unlimited = (await access.createKey({ name: 'unlimited' })).key
  const body = { model: 'priced', messages: [{ role: 'user', content: 'Hi' }] }
  const first = await server.request('POST', '/api/v1/chat/completions', { token: limited, body })
  assert.is(first.status, 200)
  assert.equal(
    ['limit-requests', 'remaining-requests', 'reset-requests', 'limit-tokens', 'remaining-tokens', 'reset-tokens'].map((name) => first.headers.get(`x-ratelimit-${name}`)),
    ['3', '2', '60s', '1000', '1000', '0s'],
  )
  // Streamed and through other wire formats too; the tokens of the first call (19) now count.
  const stream = await fetch(`${server.url}/api/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${limited}` }, body: JSON.stringify({ model: 'priced', input: 'Hi', stream: true }) })
  assert.equal([stream.headers.get('x-ratelimit-remaining-requests'), stream.headers.get('x-ratelimit-remaining-tokens')], ['1', '981'])
  await stream.text()
  await server.request('POST', '/api/v1/chat/completions', { token: limited, body })
  const over = await server.request('POST', '/api/v1/chat/completions', { token: limited, body })
  assert.is(over.status, 429)
  assert.is(over.headers.get('x-ratelimit-remaining-requests'), '0')
  assert.ok(Number(over.headers.get('retry-after')) >= 1)
  const free = await server.request('POST', '/api/v1/chat/completions', { token: unlimited, body })
  assert.is(free.status, 200)
  assert.is(free.headers.get('x-ratelimit-limit-requests'), null)
})

spend.run()
