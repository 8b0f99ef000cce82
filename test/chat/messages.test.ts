/**
 * Anthropic's Messages API through Plaza, driven by Anthropic's own npm client with `baseURL`
 * pointing at Plaza's `/api` (the client appends `/v1/messages`): translated to chat completions
 * for an OpenAI-compatible provider, passed through to an Anthropic one. The providers are loopback
 * servers speaking each protocol (fake-upstream.ts): no model provider runs here.
 */
import Anthropic from '@anthropic-ai/sdk'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { callTool, json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile } from './helpers.js'

type Ctx = { server: TestServer; fake: FakeUpstream; anthropic: Anthropic }

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const translated = suite<Ctx>('messages: Anthropic clients on an OpenAI-compatible provider')

translated.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1` } })
  ctx.anthropic = new Anthropic({ baseURL: `${ctx.server.url}/api`, apiKey: 'unused while the gateway is open', maxRetries: 0 })
})
translated.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

const lastChat = (fake: FakeUpstream) => fake.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!

translated('messages.create: system, text and an image go up as chat completions; the answer is a Message', async ({ anthropic, fake }) => {
  // Sampling fields are no longer in this client's types, but the Messages API (and Plaza) take them.
  const message = await anthropic.messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 100,
    system: 'Be brief.',
    temperature: 0.5,
    stop_sequences: ['END'],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }],
  } as Anthropic.MessageCreateParamsNonStreaming)
  assert.is(message.type, 'message')
  assert.is(message.role, 'assistant')
  assert.is(message.model, 'gpt-4o-mini')
  assert.match(message.id, /^msg_/)
  assert.equal(message.content, [{ type: 'text', text: 'Hello there!' }], 'the reasoning is not shown unless thinking is on')
  assert.is(message.stop_reason, 'end_turn')
  assert.equal([message.usage.input_tokens, message.usage.output_tokens], [12, 7])
  const sent = lastChat(fake).body
  assert.equal(sent.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
  ])
  assert.equal([sent.model, sent.max_tokens, sent.temperature, sent.stop], ['gpt-4o-mini', 100, 0.5, ['END']])

  // With thinking on, the reasoning comes back as a thinking block.
  const thought = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Hi' }] })
  assert.equal(thought.content.map((block) => block.type), ['thinking', 'text'])
  assert.is((thought.content[0] as Anthropic.ThinkingBlock).thinking, 'The user greets me.')
})

translated('tools: tool_use comes back with its input parsed; tool_result goes up as a tool message after the call', async ({ anthropic, fake }) => {
  const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }]
  fake.enqueue(callTool({ id: 'call_a1', name: 'get_weather', arguments: '{"city":"Rome"}', text: 'Let me look.' }))
  const first = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 200, tools, tool_choice: { type: 'any', disable_parallel_tool_use: true }, messages: [{ role: 'user', content: 'Weather in Rome?' }] })
  assert.is(first.stop_reason, 'tool_use')
  assert.equal(first.content, [
    { type: 'text', text: 'Let me look.' },
    { type: 'tool_use', id: 'call_a1', name: 'get_weather', input: { city: 'Rome' } },
  ])
  const sent = lastChat(fake).body
  assert.equal(sent.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: tools[0].input_schema } }])
  assert.equal([sent.tool_choice, sent.parallel_tool_calls], ['required', false])

  fake.enqueue(reply({ pieces: ['Warm in Rome.'] }))
  const second = await anthropic.messages.create({
    model: 'gpt-4o-mini',
    max_tokens: 200,
    tools,
    messages: [
      { role: 'user', content: 'Weather in Rome?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_a1', content: [{ type: 'text', text: '24 C' }] }, { type: 'text', text: 'Thanks' }] },
    ],
  })
  assert.equal(second.content, [{ type: 'text', text: 'Warm in Rome.' }])
  assert.equal(lastChat(fake).body.messages, [
    { role: 'user', content: 'Weather in Rome?' },
    { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_a1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
    { role: 'tool', tool_call_id: 'call_a1', content: '24 C' },
    { role: 'user', content: 'Thanks' },
  ])
})

translated("messages.stream: Anthropic's events, text and tool_use blocks, usage at the end", async ({ anthropic, fake }) => {
  fake.enqueue(reply({ pieces: ['Stream', 'ed ', 'reply.'], usage: { input: 30, output: 4 } }))
  const stream = anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] })
  const types: string[] = []
  let text = ''
  stream.on('streamEvent', (event) => types.push(event.type))
  stream.on('text', (delta) => (text += delta))
  const final = await stream.finalMessage()
  assert.is(text, 'Streamed reply.')
  assert.equal(final.content, [{ type: 'text', text: 'Streamed reply.' }])
  assert.equal([final.usage.input_tokens, final.usage.output_tokens], [30, 4])
  assert.is(final.stop_reason, 'end_turn')
  assert.equal(types, ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])

  // The raw events, ping included, as a client reading the SSE itself sees them.
  fake.enqueue(callTool({ id: 'call_s1', name: 'lookup', arguments: '{"q":"plaza"}', pieces: 3 }))
  const raw: string[] = []
  for await (const event of await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, stream: true, tools: [{ name: 'lookup', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'Look' }] })) raw.push(event.type)
  assert.equal(raw.slice(0, 2), ['message_start', 'content_block_start'])
  fake.enqueue(callTool({ id: 'call_s2', name: 'lookup', arguments: '{"q":"gateway"}', pieces: 3 }))
  const withTool = await anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, tools: [{ name: 'lookup', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'Look' }] }).finalMessage()
  assert.equal(withTool.content, [{ type: 'tool_use', id: 'call_s2', name: 'lookup', input: { q: 'gateway' } }])
  assert.is(withTool.stop_reason, 'tool_use')
})

translated('the ping event follows message_start', async ({ server }) => {
  const res = await fetch(`${server.url}/api/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] }) })
  const text = await res.text()
  const names = [...text.matchAll(/^event: (\S+)$/gm)].map((match) => match[1])
  assert.equal(names.slice(0, 3), ['message_start', 'ping', 'content_block_start'])
  assert.equal(names.slice(-2), ['message_delta', 'message_stop'])
})

translated("errors in Anthropic's shape: a bad request, an upstream failure, a stream cut mid-way", async ({ anthropic, fake, server }) => {
  const bad = await server.request('POST', '/api/v1/messages', { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } })
  assert.is(bad.status, 400)
  assert.equal(Object.keys(bad.body).sort(), ['error', 'type'])
  assert.is(bad.body.type, 'error')
  assert.is(bad.body.error.type, 'invalid_request_error')
  assert.match(bad.body.error.message, /max_tokens/)
  const viaClient = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }] }).catch((e) => e)
  assert.instance(viaClient, Anthropic.BadRequestError)
  assert.match(viaClient.message, /document block needs an Anthropic provider/)

  fake.enqueue(json(400, { error: { message: 'context too long' } }))
  const upstream = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(upstream, Anthropic.APIError)
  assert.is(upstream.status, 502)
  assert.is(upstream.error.type, 'error')
  assert.match(upstream.message, /context too long/)

  fake.enqueue(reply({ pieces: ['Part', 'ial'], cutAfter: { events: 1, how: 'destroy' } }))
  const cut = await anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage().catch((e) => e)
  assert.instance(cut, Anthropic.APIError, 'a cut stream throws instead of ending quietly')
  assert.match(cut.message, /ended the stream before finishing|dropped the connection/)
})

translated('with gateway keys: the key goes as x-api-key (Anthropic\'s clients), and a 401 says how to send one', async ({ server }) => {
  const { key } = await (await server.services.gatewayAccess()).createKey({ name: 'anthropic-client' })
  try {
    const anonymous = new Anthropic({ baseURL: `${server.url}/api`, apiKey: 'sk-plaza-wrong', maxRetries: 0 })
    const refused = await anonymous.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
    assert.instance(refused, Anthropic.AuthenticationError)
    assert.is(refused.error.error.type, 'authentication_error')
    assert.match(refused.message, /x-api-key/)
    const client = new Anthropic({ baseURL: `${server.url}/api`, apiKey: key, maxRetries: 0 })
    const ok = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
    assert.is(ok.content[0].type, 'text')
  } finally {
    await (await server.services.gatewayAccess()).revokeKey('anthropic-client')
  }
})

const native = suite<Ctx>('messages: passed through to an Anthropic provider')

native.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  const file = providerFile(`
providers:
  claude: { type: anthropic, base_url: "${ctx.fake.url}", api_key_env: FAKE_ANT_KEY }
models:
  sonnet: { provider: claude, model: claude-sonnet-4-5 }
`)
  ctx.server = await startTestServer({ env: { PLAZA_LLM_CONFIG: file, FAKE_ANT_KEY: 'sk-ant-native-1' } })
  ctx.anthropic = new Anthropic({ baseURL: `${ctx.server.url}/api`, apiKey: 'unused', maxRetries: 0 })
})
native.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

native('the request goes up as sent with its own key and the provider\'s model; the answer comes back with the name asked for', async ({ anthropic, fake }) => {
  const message = await anthropic.messages.create(
    { model: 'sonnet', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'Hi' }] },
    { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
  )
  const sent = fake.requests.at(-1)!
  assert.is(sent.path, '/v1/messages')
  assert.is(sent.headers['x-api-key'], 'sk-ant-native-1')
  assert.is(sent.headers['anthropic-beta'], 'prompt-caching-2024-07-31')
  assert.is(sent.headers['anthropic-version'], '2023-06-01')
  assert.equal(sent.body.system, [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], 'blocks Plaza does not read still go up as they are')
  assert.is(sent.body.model, 'claude-sonnet-4-5')
  assert.is(message.model, 'sonnet')
  assert.equal(message.content, [{ type: 'text', text: '<think>The user greets me.</think>Hello there!' }], 'as the provider said it')
})

native('streamed: the provider\'s events pass through; the stream helper assembles them', async ({ anthropic, fake }) => {
  fake.enqueue(callTool({ id: 'toolu_1', name: 'lookup', arguments: '{"q":"x"}', text: 'Checking.' }))
  const final = await anthropic.messages.stream({ model: 'sonnet', max_tokens: 100, tools: [{ name: 'lookup', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'Go' }] }).finalMessage()
  assert.is(final.model, 'sonnet')
  assert.equal(final.content, [
    { type: 'text', text: 'Checking.' },
    { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
  ])
  assert.equal([final.usage.input_tokens, final.usage.output_tokens], [30, 9])
  assert.is(fake.requests.at(-1)!.body.stream, true)
})

translated.run()
native.run()
