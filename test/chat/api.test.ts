/**
 * The three chat operations through the real server, against loopback providers speaking
 * OpenAI's and Anthropic's protocols.
 */
import http from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { hang, json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { post, providerFile, readEvents, USER_HI } from './helpers.js'

const KEY = 'sk-live-SECRET-4242-abcdef'

// ---------------------------------------------------------------- nothing configured

const unconfigured = suite<{ server: TestServer }>('chat: nothing configured')
unconfigured.before(async (ctx) => {
  ctx.server = await startTestServer({ env: {} })
})
unconfigured.after(async (ctx) => ctx.server.close())

unconfigured('every chat operation answers 503 saying how to configure a provider', async ({ server }) => {
  const v1 = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelg-4o-mini', messages: USER_HI } })
  assert.is(v1.status, 503)
  assert.is(v1.body.error.code, 'provider_not_configured')
  assert.match(v1.body.error.message, /PLAZA_LLM_BASE_URL/)
  assert.match(v1.body.error.message, /PLAZA_LLM_CONFIG/)
  for (const path of ['/api/chaty', '/api/reasoning-70b']) {
    const res = await server.request('POST', path, { body: { messages: USER_HI, stream: true } })
    assert.is(res.status, 503)
    assert.is(res.body.status, 'error')
    assert.is(res.body.data, null)
    assert.match(res.body.message, /PLAZA_LLM_BASE_URL/)
  }
})

// ---------------------------------------------------------------- the PLAZA_LLM_* default provider (OpenAI protocol)

const openai = suite<{ server: TestServer; fake: FakeUpstream }>('chat: OpenAI-compatible provider from PLAZA_LLM_*')
openai.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: KEY, PLAZA_LLM_MODEL: 'fake-70b' } })
})
openai.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

openai('completions: OpenAI fields plus message, reasoning and answer; the upstream gets the mapped model and the key', async ({ server, fake }) => {
  const res = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelg-4o-mini', messages: [{ role: 'system', content: 'Be kind.' }, ...USER_HI], temperature: 0.2 } })
  assert.is(res.status, 200)
  const body = res.body
  assert.match(body.id, /^chatcmpl-/)
  assert.is(body.object, 'chat.completion')
  assert.type(body.created, 'number')
  assert.is(body.model, 'modelg-4o-mini')
  assert.is(body.message, '<think>The user greets me.</think>Hello there!')
  assert.is(body.reasoning, 'The user greets me.')
  assert.is(body.answer, 'Hello there!')
  assert.equal(body.choices, [{ index: 0, message: { role: 'assistant', content: 'Hello there!', reasoning_content: 'The user greets me.', refusal: null }, logprobs: null, finish_reason: 'stop' }])
  assert.equal(body.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
  assert.is(res.headers.get('x-plaza-provider'), 'env')

  const upstream = fake.requests.at(-1)!
  assert.is(upstream.path, '/v1/chat/completions')
  assert.is(upstream.headers.authorization, `Bearer ${KEY}`)
  assert.equal(upstream.body, { model: 'fake-70b', messages: [{ role: 'system', content: 'Be kind.' }, ...USER_HI], temperature: 0.2 })
})

openai('reasoning-70b forwards its sampling fields; chaty ignores a model field; separate reasoning_content passes through', async ({ server, fake }) => {
  const sampling = { max_tokens: 64, temperature: 0.6, top_p: 0.95, top_k: 40, repetition_penalty: 1.1, stop: ['</answer>'] }
  const res = await server.request('POST', '/api/reasoning-70b', { body: { messages: USER_HI, ...sampling } })
  assert.is(res.status, 200)
  assert.is(res.body.answer, 'Hello there!')
  assert.equal(fake.requests.at(-1)!.body, { model: 'fake-70b', messages: USER_HI, ...sampling })

  fake.enqueue(reply({ pieces: ['Plain answer.'], reasoning: 'Thought separately.' }))
  const chaty = await server.request('POST', '/api/chaty', { body: { model: 'whatever-you-like', messages: USER_HI } })
  assert.is(chaty.status, 200)
  assert.is(chaty.body.message, 'Plain answer.')
  assert.is(chaty.body.reasoning, 'Thought separately.')
  assert.is(chaty.body.answer, 'Plain answer.')
  assert.is(chaty.body.model, 'chaty')
})

openai('stream: chat.completion.chunk events, <think> split into reasoning_content even when tags are cut, usage on the last chunk, then [DONE]', async ({ server, fake }) => {
  fake.enqueue(reply({ pieces: ['<thi', 'nk>Plan: gr', 'eet.</th', 'ink>\n\nHel', 'lo!'] }))
  const response = await post(`${server.url}/api/v1/chat/completions`, { model: 'modelx-2', messages: USER_HI, stream: true })
  assert.is(response.status, 200)
  assert.match(response.headers.get('content-type')!, /^text\/event-stream/)
  const events = await readEvents(response)
  assert.is(events.at(-1), '[DONE]')
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e))
  for (const chunk of chunks) {
    assert.is(chunk.object, 'chat.completion.chunk')
    assert.is(chunk.model, 'modelx-2')
    assert.is(chunk.id, chunks[0].id)
  }
  assert.equal(chunks[0].choices[0].delta, { role: 'assistant', content: '' })
  const reasoning = chunks.map((c) => c.choices[0].delta.reasoning_content ?? '').join('')
  const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('')
  assert.is(reasoning, 'Plan: greet.')
  assert.is(content, 'Hello!')
  assert.ok(chunks.some((c) => c.choices[0].delta.reasoning_content === 'Plan: gr'), 'reasoning streams as it arrives')
  const last = chunks.at(-1)
  assert.is(last.choices[0].finish_reason, 'stop')
  assert.equal(last.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
  assert.equal(fake.requests.at(-1)!.body.stream_options, { include_usage: true })
})

openai('an upstream that breaks off mid-stream ends in an error event, never a clean [DONE]', async ({ server, fake }) => {
  for (const how of ['destroy', 'end'] as const) {
    fake.enqueue(reply({ pieces: ['One', ' two', ' three'], cutAfter: { events: 2, how } }))
    const response = await post(`${server.url}/api/reasoning-70b`, { messages: USER_HI, stream: true })
    assert.is(response.status, 200)
    const events = await readEvents(response)
    assert.not.ok(events.includes('[DONE]'), how)
    const content = events.slice(0, -1).map((e) => JSON.parse(e).choices[0].delta.content ?? '').join('')
    assert.is(content, 'One two', 'what arrived before the cut was passed on')
    const error = JSON.parse(events.at(-1)!).error
    assert.is(error.type, 'upstream_error', how)
    assert.is(error.code, 'upstream_error')
    assert.match(error.message, /provider "env" \(fake-70b\)/)
  }
})

openai('429 then success: retried (Retry-After honoured) and answered', async ({ server, fake }) => {
  const before = fake.requests.length
  fake.enqueue(json(429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after': '0' }))
  const res = await server.request('POST', '/api/chaty', { body: { messages: USER_HI } })
  assert.is(res.status, 200)
  assert.is(res.body.answer, 'Hello there!')
  assert.is(fake.requests.length - before, 2)

  fake.enqueue(json(503, { error: { message: 'overloaded' } }, { 'retry-after': '0' }))
  const streamed = await post(`${server.url}/api/v1/chat/completions`, { model: 'modelg-4o-mini', messages: USER_HI, stream: true })
  assert.is((await readEvents(streamed)).at(-1), '[DONE]', 'a stream is retried before its first byte too')
})

openai('upstream errors are 502 with the upstream message; a key the upstream echoes is redacted', async ({ server, fake }) => {
  fake.enqueue(json(400, { error: { message: 'This model maximum context length is 8192 tokens' } }))
  const v1 = await server.request('POST', '/api/v1/chat/completions', { body: { messages: USER_HI } })
  assert.is(v1.status, 502)
  assert.is(v1.body.error.type, 'upstream_error')
  assert.match(v1.body.error.message, /answered 400: This model maximum context length is 8192 tokens/)

  fake.enqueue(json(401, { error: { message: `Incorrect API key provided: ${KEY}.` } }))
  const chaty = await server.request('POST', '/api/chaty', { body: { messages: USER_HI } })
  assert.is(chaty.status, 502)
  assert.is(chaty.body.status, 'error')
  assert.match(chaty.body.message, /Incorrect API key provided: \[redacted\]/)
  assert.not.match(JSON.stringify(chaty.body), KEY)
})

openai('bad input is a 400 that names the problem, and reaches no provider', async ({ server, fake }) => {
  const before = fake.requests.length
  const cases: Array<[path: string, body: unknown, message: RegExp]> = [
    ['/api/v1/chat/completions', { model: '', messages: USER_HI }, /model must not be empty/],
    ['/api/v1/chat/completions', { model: 'o1-mini' }, /messages is required/],
    ['/api/v1/chat/completions', { messages: [] }, /messages must hold at least one message/],
    ['/api/v1/chat/completions', { messages: [{ role: 'robot', content: 'x' }] }, /role must be one of system, developer, user, assistant, tool/],
    ['/api/v1/chat/completions', { messages: [{ role: 'tool', content: 'x' }] }, /messages\.0\.tool_call_id: a tool message needs tool_call_id/],
    ['/api/v1/chat/completions', { messages: [{ role: 'user', content: 42 }] }, /content must be a string or an array of parts/],
    ['/api/v1/chat/completions', { messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }, /content must be a string or an array of parts/],
    ['/api/v1/chat/completions', { messages: USER_HI, tools: [{ type: 'function', function: { name: 'has space' } }] }, /function\.name is 1-64 letters/],
    ['/api/v1/chat/completions', { messages: USER_HI, tool_choice: 'maybe' }, /tool_choice must be none, auto, required/],
    ['/api/v1/chat/completions', { messages: USER_HI, response_format: { type: 'yaml' } }, /response_format must be/],
    ['/api/v1/chat/completions', { messages: USER_HI, n: 20 }, /n must be from 1 to 16/],
    ['/api/v1/chat/completions', { messages: [{ role: 'system', content: 'only rules' }] }, /at least one user or assistant message/],
    ['/api/v1/chat/completions', [1, 2], /Request body must be a JSON object/],
    ['/api/reasoning-70b', { messages: USER_HI, temperature: 3 }, /temperature must be from 0 to 2/],
    ['/api/reasoning-70b', { messages: USER_HI, top_k: 0 }, /top_k must be from 1 to 1000/],
    ['/api/reasoning-70b', { messages: USER_HI, top_p: 0 }, /top_p must be greater than 0/],
    ['/api/reasoning-70b', { messages: USER_HI, max_tokens: 1.5 }, /max_tokens must be a whole number/],
    ['/api/reasoning-70b', { messages: USER_HI, repetition_penalty: -1 }, /repetition_penalty must be greater than 0/],
    ['/api/reasoning-70b', { messages: USER_HI, stop: ['a', 'b', 'c', 'd', 'e'] }, /stop may hold at most 4 sequences/],
    ['/api/reasoning-70b', { messages: USER_HI, stream: 'yes' }, /stream must be true or false/],
    ['/api/chaty', { messages: 'Hi' }, /messages must be an array/],
  ]
  for (const [path, body, message] of cases) {
    const res = await server.request('POST', path, { body })
    assert.is(res.status, 400, `${path} ${JSON.stringify(body)}`)
    const text = path.startsWith('/api/v1') ? res.body.error.message : res.body.message
    assert.match(text, message)
    if (path.startsWith('/api/v1')) assert.is(res.body.error.type, 'invalid_request_error')
  }
  const malformed = await server.request('POST', '/api/v1/chat/completions', { raw: '{"messages": [', headers: { 'content-type': 'application/json' } })
  assert.is(malformed.status, 400)
  assert.match(malformed.body.error.message, /not valid JSON/)
  assert.is(fake.requests.length, before)
})

openai('a client that goes away aborts the upstream request', async ({ server, fake }) => {
  fake.enqueue(reply({ pieces: ['First', ' and never more'], cutAfter: { events: 1, how: 'hang' } }))
  // node:http rather than fetch, so that going away closes exactly this one connection.
  const request = http.request(`${server.url}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } })
  request.end(JSON.stringify({ messages: USER_HI, stream: true }))
  const response = await new Promise<http.IncomingMessage>((resolve) => request.on('response', resolve))
  let seen = ''
  for await (const chunk of response) {
    seen += String(chunk)
    if (seen.includes('First')) break // leaving the loop destroys the response and its socket
  }
  request.on('error', () => {})
  await fake.requests.at(-1)!.aborted // resolves only when the gateway closed its upstream connection
})

// ---------------------------------------------------------------- a provider file: Anthropic, fallbacks, timeouts

const routed = suite<{ server: TestServer; primary: FakeUpstream; claude: FakeUpstream; slow: FakeUpstream }>('chat: provider file with Anthropic, fallback and timeout')
routed.before(async (ctx) => {
  ctx.primary = await startFakeUpstream()
  ctx.claude = await startFakeUpstream(reply({ pieces: ['Claude', ' says hi.'] }))
  ctx.slow = await startFakeUpstream(hang)
  const file = providerFile(`
providers:
  primary: { base_url: "${ctx.primary.url}/v1", api_key_env: PRIMARY_KEY }
  claude: { type: anthropic, base_url: "${ctx.claude.url}", api_key_env: CLAUDE_KEY }
  slow: { base_url: "${ctx.slow.url}/v1", timeout_ms: 150 }
models:
  modelc-3-haiku-20240307: { provider: claude, model: claude-3-5-haiku-latest, max_tokens: 512 }
  modelg-4o-mini: { provider: primary, model: gpt-4o-mini, fallbacks: [{ provider: claude, model: claude-3-5-haiku-latest }] }
  o1-mini: { provider: slow, model: o1-mini }
retry: { max_retries: 1, base_delay_ms: 0 }
`)
  ctx.server = await startTestServer({ env: { PLAZA_LLM_CONFIG: file, PRIMARY_KEY: 'pk-primary-0001', CLAUDE_KEY: 'ck-claude-0002' } })
})
routed.after(async (ctx) => {
  await ctx.server.close()
  await Promise.all([ctx.primary.close(), ctx.claude.close(), ctx.slow.close()])
})

routed('Anthropic: translated to the Messages API and back, streamed and not', async ({ server, claude }) => {
  const res = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelc-3-haiku-20240307', messages: [{ role: 'system', content: 'Be kind.' }, ...USER_HI], top_k: 5, repetition_penalty: 1.2 } })
  assert.is(res.status, 200)
  assert.is(res.body.answer, 'Claude says hi.')
  assert.equal(res.body.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
  const upstream = claude.requests.at(-1)!
  assert.is(upstream.path, '/v1/messages')
  assert.is(upstream.headers['x-api-key'], 'ck-claude-0002')
  assert.is(upstream.headers['anthropic-version'], '2023-06-01')
  assert.equal(upstream.body, { model: 'claude-3-5-haiku-latest', max_tokens: 512, system: 'Be kind.', messages: USER_HI, top_k: 5 })

  claude.enqueue(reply({ pieces: ['<think>hmm</think>', 'Streamed', ' reply'], reasoning: 'Extended thinking. ' }))
  const streamed = await post(`${server.url}/api/v1/chat/completions`, { model: 'modelc-3-haiku-20240307', messages: USER_HI, stream: true })
  const events = await readEvents(streamed)
  assert.is(events.at(-1), '[DONE]')
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e))
  assert.is(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'Streamed reply')
  assert.is(chunks.map((c) => c.choices[0].delta.reasoning_content ?? '').join(''), 'Extended thinking. hmm')
  assert.is(chunks.at(-1).choices[0].finish_reason, 'stop')
  assert.equal(chunks.at(-1).usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
})

routed('5xx after the retries: the fallback provider answers', async ({ server, primary, claude }) => {
  const before = { primary: primary.requests.length, claude: claude.requests.length }
  primary.enqueue(json(500, { error: { message: 'boom' } }), json(502, 'Bad Gateway'))
  const res = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelg-4o-mini', messages: USER_HI } })
  assert.is(res.status, 200)
  assert.is(res.body.answer, 'Claude says hi.')
  assert.is(res.headers.get('x-plaza-provider'), 'claude')
  assert.is(primary.requests.length - before.primary, 2, 'first try and one retry')
  assert.is(claude.requests.length - before.claude, 1)

  primary.enqueue(json(500, {}), json(500, {}))
  claude.enqueue(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))
  const failed = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'modelg-4o-mini', messages: USER_HI } })
  assert.is(failed.status, 502)
  assert.match(failed.body.error.message, /provider "claude" .*answered 529: Overloaded \(tried 2 providers\)/)
})

routed('an upstream that hangs past its timeout is a 504', async ({ server, slow }) => {
  const res = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'o1-mini', messages: USER_HI } })
  assert.is(res.status, 504)
  assert.is(res.body.error.code, 'upstream_timeout')
  assert.match(res.body.error.message, /did not answer within 150 ms/)
  assert.is(slow.requests.length, 1, 'a hang is not retried on the same provider')

  const streamed = await server.request('POST', '/api/reasoning-70b', { body: { messages: USER_HI, stream: true } })
  assert.is(streamed.status, 404, 'reasoning-70b is not mapped in this file and there is no default')
  assert.match(streamed.body.message, /The model "reasoning-70b" is not served here: GET \/api\/v1\/models lists/)
  const unknown = await server.request('POST', '/api/v1/chat/completions', { body: { model: 'gpt-5', messages: USER_HI } })
  assert.is(unknown.status, 404)
  assert.equal([unknown.body.error.type, unknown.body.error.code, unknown.body.error.param], ['invalid_request_error', 'model_not_found', 'model'])
})

routed('a stream that goes silent past the timeout ends in an upstream_timeout error event', async ({ server, slow }) => {
  slow.enqueue(reply({ pieces: ['Starts', ' then stops'], cutAfter: { events: 1, how: 'hang' } }))
  const response = await post(`${server.url}/api/v1/chat/completions`, { model: 'o1-mini', messages: USER_HI, stream: true })
  assert.is(response.status, 200)
  const events = await readEvents(response)
  assert.not.ok(events.includes('[DONE]'))
  assert.is(JSON.parse(events.at(-1)!).error.code, 'upstream_timeout')
})

for (const s of [unconfigured, openai, routed]) s.run()
