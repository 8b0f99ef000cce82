/**
 * The catalog's gateway aliases (copilot, llama-70b, reasoning-small, gpt, coder), the chat
 * providers and models lists, and the second (`inference`) upstream, through the real server
 * against loopback providers.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { json, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { USER_HI } from './helpers.js'

const KEY = 'sk-alias-SECRET-5151'
const INFERENCE_KEY = 'sk-inference-SECRET-7373'

type Ctx = { server: TestServer; fake: FakeUpstream; second: FakeUpstream }
const aliases = suite<Ctx>('chat: gateway aliases, provider and model lists, the inference upstream')

aliases.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.second = await startFakeUpstream()
  // No PLAZA_LLM_MODEL: each alias goes upstream as the model of the documented default mapping (chat/names.ts), never as itself.
  ctx.server = await startTestServer({
    env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: KEY, PLAZA_INFERENCE_BASE_URL: `${ctx.second.url}/v1`, PLAZA_INFERENCE_API_KEY: INFERENCE_KEY },
  })
})
aliases.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
  await ctx.second.close()
})

aliases('POST /api/copilot and /api/llama-70b call their own alias with the messages and sampling fields', async ({ server, fake }) => {
  const copilot = await server.request('POST', '/api/copilot', { body: { messages: USER_HI } })
  assert.is(copilot.status, 200)
  assert.is(copilot.body.answer, 'Hello there!')
  assert.is(copilot.body.object, 'chat.completion')
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o')

  const llama = await server.request('POST', '/api/llama-70b', { body: { messages: USER_HI, temperature: 0.3, top_k: 40, model: 'ignored' } })
  assert.is(llama.status, 200)
  const upstream = fake.requests.at(-1)!.body
  assert.is(upstream.model, 'meta-llama/Llama-3.3-70B-Instruct')
  assert.is(upstream.temperature, 0.3)
  assert.is(upstream.top_k, 40)
  assert.equal(upstream.messages, USER_HI)
})

aliases('GET /api/reasoning-small and /api/gpt take ?content= (and system=) as one user message', async ({ server, fake }) => {
  const small = await server.request('GET', '/api/reasoning-small?content=' + encodeURIComponent('Why is the sky blue?'))
  assert.is(small.status, 200)
  assert.is(small.body.reasoning, 'The user greets me.')
  assert.is(small.body.answer, 'Hello there!')
  assert.equal(fake.requests.at(-1)!.body, { model: 'o3-mini', messages: [{ role: 'user', content: 'Why is the sky blue?' }] })

  const gpt = await server.request('GET', '/api/gpt?content=Hi&system=Be%20brief')
  assert.is(gpt.status, 200)
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'Be brief' },
    { role: 'user', content: 'Hi' },
  ])
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o-mini')
})

aliases('GET /api/coder answers plain text, the answer without its reasoning; maxTokens becomes max_tokens', async ({ server, fake }) => {
  const res = await fetch(`${server.url}/api/coder?prompt=${encodeURIComponent('reverse a string in Go')}&maxTokens=256`)
  assert.is(res.status, 200)
  assert.match(res.headers.get('content-type')!, /^text\/plain/)
  assert.is(await res.text(), 'Hello there!')
  const upstream = fake.requests.at(-1)!.body
  assert.is(upstream.model, 'gpt-4o')
  assert.is(upstream.max_tokens, 256)
  assert.equal(upstream.messages, [{ role: 'user', content: 'reverse a string in Go' }])
})

aliases('bad queries are 400s in the envelope and reach no provider', async ({ server, fake }) => {
  const before = fake.requests.length
  for (const [path, pattern] of [
    ['/api/reasoning-small', /content is required/],
    ['/api/gpt?content=%20%20', /content must not be empty/],
    [`/api/gpt?content=${'x'.repeat(8001)}`, /at most 8000/],
    ['/api/coder?prompt=hi&maxTokens=abc', /maxTokens must be a number/],
    ['/api/coder?prompt=hi&maxTokens=0', /maxTokens must be from 1/],
    ['/api/coder', /prompt is required/],
  ] as const) {
    const res = await server.request('GET', path)
    assert.is(res.status, 400, path)
    assert.is(res.body.status, 'error', path)
    assert.match(res.body.message, pattern, path)
  }
  const copilot = await server.request('POST', '/api/copilot', { body: { messages: [] } })
  assert.is(copilot.status, 400)
  assert.is(fake.requests.length, before)
})

aliases('GET /api/chat/providers and /api/chat/models describe the configuration without keys or URLs', async ({ server, fake, second }) => {
  const providers = await server.request('GET', '/api/chat/providers')
  assert.is(providers.status, 200)
  assert.equal(providers.body.providers, [
    { name: 'env', type: 'openai' },
    { name: 'inference', type: 'openai', serves: '/api/inference/chat/completions' },
  ])
  const models = await server.request('GET', '/api/chat/models')
  assert.is(models.status, 200)
  const copilot = models.body.models.find((model: { id: string }) => model.id === 'copilot')
  assert.equal(copilot, { id: 'copilot', targets: [{ provider: 'env', model: 'gpt-4o' }] })
  assert.ok(models.body.models.some((model: { id: string }) => model.id === 'modelg-4o-mini'))
  for (const text of [JSON.stringify(providers.body), JSON.stringify(models.body)]) {
    for (const secret of [KEY, INFERENCE_KEY, fake.url, second.url]) assert.not.ok(text.includes(secret), `the lists must not show ${secret}`)
  }
})

aliases('POST /api/inference/chat/completions goes to the second upstream with its own key, the model as named', async ({ server, fake, second }) => {
  const before = fake.requests.length
  const res = await server.request('POST', '/api/inference/chat/completions', { body: { model: 'meta-llama/Llama-3.3-70B-Instruct', messages: USER_HI } })
  assert.is(res.status, 200)
  assert.is(res.body.answer, 'Hello there!')
  assert.is(res.body.model, 'meta-llama/Llama-3.3-70B-Instruct')
  assert.is(res.headers.get('x-plaza-provider'), 'inference')
  const upstream = second.requests.at(-1)!
  assert.is(upstream.path, '/v1/chat/completions')
  assert.is(upstream.headers.authorization, `Bearer ${INFERENCE_KEY}`)
  assert.is(upstream.body.model, 'meta-llama/Llama-3.3-70B-Instruct')
  assert.is(fake.requests.length, before, 'the chat gateway is not called')

  // Its failures are OpenAI's error shape, with the key scrubbed from what the upstream said.
  second.enqueue(json(400, { error: { message: `bad key ${INFERENCE_KEY}` } }))
  const failed = await server.request('POST', '/api/inference/chat/completions', { body: { model: 'm', messages: USER_HI } })
  assert.ok(failed.status >= 400 && failed.status < 600 && failed.status !== 500, String(failed.status))
  assert.type(failed.body.error.message, 'string')
  assert.not.ok(JSON.stringify(failed.body).includes(INFERENCE_KEY))
})

const unconfigured = suite<{ server: TestServer }>('chat: aliases with nothing configured')
unconfigured.before(async (ctx) => {
  ctx.server = await startTestServer({ env: {} })
})
unconfigured.after(async (ctx) => ctx.server.close())

unconfigured('the aliases answer 503 saying what to set; the lists are empty; inference names its own variables', async ({ server }) => {
  for (const [method, path] of [
    ['GET', '/api/gpt?content=hi'],
    ['GET', '/api/coder?prompt=hi'],
    ['POST', '/api/copilot'],
  ] as const) {
    const res = await server.request(method, path, method === 'POST' ? { body: { messages: USER_HI } } : {})
    assert.is(res.status, 503, path)
    assert.match(res.body.message, /PLAZA_LLM_BASE_URL/, path)
  }
  const inference = await server.request('POST', '/api/inference/chat/completions', { body: { model: 'm', messages: USER_HI } })
  assert.is(inference.status, 503)
  assert.match(inference.body.error.message, /PLAZA_INFERENCE_BASE_URL/)
  const providers = await server.request('GET', '/api/chat/providers')
  assert.equal(providers.body.providers, [])
  const list = await server.request('GET', '/api/list')
  const row = list.body.operations.find((operation: { path: string }) => operation.path === '/api/inference/chat/completions')
  assert.is(row.offered, true)
  assert.is(row.configured, false)
})

aliases.run()
unconfigured.run()
