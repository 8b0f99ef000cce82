/**
 * OpenAI's Responses API through Plaza, driven by OpenAI's own npm client: translated to chat
 * completions for a provider that does not serve it, passed through to one that does. The
 * providers are loopback servers speaking each protocol (fake-upstream.ts): no model provider
 * runs here.
 */
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { eq } from 'drizzle-orm'
import { RESPONSE_TTL_MS } from '../../src/server/chat/surfaces/responses-store.js'
import { gatewayResponses } from '../../src/server/db/schema.js'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { callTool, json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile } from './helpers.js'

type Ctx = { server: TestServer; fake: FakeUpstream; openai: OpenAI; clock: ReturnType<typeof manualClock> }

const translated = suite<Ctx>('responses: translated to chat completions')

translated.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.clock = manualClock(new Date('2026-05-01T10:00:00Z'))
  ctx.server = await startTestServer({ clock: ctx.clock.clock, env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: 'sk-upstream-resp-1' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused while the gateway is open', maxRetries: 0 })
})
translated.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

const lastChat = (fake: FakeUpstream) => fake.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!

translated('a string input with instructions: the upstream gets chat completions; the answer is a Response with reasoning and text items', async ({ openai, fake }) => {
  const response = await openai.responses.create({ model: 'gpt-4o-mini', instructions: 'Be brief.', input: 'Hi', max_output_tokens: 64, temperature: 0.2 })
  assert.match(response.id, /^resp_[0-9a-f]{32}$/)
  assert.is(response.object, 'response')
  assert.is(response.status, 'completed')
  assert.is(response.model, 'gpt-4o-mini')
  assert.is(response.output_text, 'Hello there!')
  assert.equal(response.output.map((item) => item.type), ['reasoning', 'message'])
  const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem
  assert.is(reasoning.content?.[0]?.text, 'The user greets me.')
  assert.equal(response.usage && [response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens], [12, 7, 19])
  assert.is(response.instructions, 'Be brief.')
  const sent = lastChat(fake).body
  assert.equal(sent.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ])
  assert.equal([sent.model, sent.max_tokens, sent.temperature], ['gpt-4o-mini', 64, 0.2])
})

translated('stream: typed events from response.created to response.completed; the client assembles the text', async ({ openai, fake }) => {
  fake.enqueue(reply({ pieces: ['Streamed ', 'answer', '.'] }))
  const types: string[] = []
  const sequence: number[] = []
  let text = ''
  for await (const event of await openai.responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: 'Hi' }], stream: true })) {
    types.push(event.type)
    sequence.push(event.sequence_number)
    if (event.type === 'response.output_text.delta') text += event.delta
  }
  assert.is(text, 'Streamed answer.')
  assert.equal(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added'])
  assert.equal(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'])
  assert.equal(sequence, sequence.map((_, index) => index), 'sequence numbers count up from 0')

  // The SDK's stream helper reads the same events into a final Response.
  fake.enqueue(reply({ pieces: ['<think>Hmm.</think>', 'Final', ' text'] }))
  const stream = openai.responses.stream({ model: 'gpt-4o-mini', input: 'Hi' })
  const final = await stream.finalResponse()
  assert.is(final.output_text, 'Final text')
  assert.is(final.status, 'completed')
  assert.is(final.usage?.total_tokens, 19)
  assert.equal(final.output.map((item) => item.type), ['reasoning', 'message'])
})

translated('function tools: a call comes back as a function_call item; its output goes back with previous_response_id', async ({ openai, fake }) => {
  const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true }]
  fake.enqueue(callTool({ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }))
  const first = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Paris?', tools, tool_choice: 'auto' })
  const call = first.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall
  assert.equal([call.call_id, call.name, call.arguments], ['call_w1', 'get_weather', '{"city":"Paris"}'])
  const sentTools = lastChat(fake).body.tools
  assert.equal(sentTools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: tools[0].type === 'function' ? tools[0].parameters : {}, strict: true } }])
  assert.is(lastChat(fake).body.tool_choice, 'auto')

  fake.enqueue(reply({ pieces: ['Sunny in Paris.'] }))
  const second = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"sky":"sunny"}' }], tools })
  assert.is(second.output_text, 'Sunny in Paris.')
  assert.is(second.previous_response_id, first.id)
  assert.equal(lastChat(fake).body.messages, [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
  ])

  // Streamed, the call's arguments arrive as function_call_arguments deltas.
  fake.enqueue(callTool({ id: 'call_w2', name: 'get_weather', arguments: '{"city":"Oslo"}', pieces: 4 }))
  const types: string[] = []
  let args = ''
  for await (const event of await openai.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Oslo?', tools, stream: true })) {
    types.push(event.type)
    if (event.type === 'response.function_call_arguments.delta') args += event.delta
    if (event.type === 'response.completed') {
      const item = event.response.output.find((output) => output.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall
      assert.equal([item.call_id, item.arguments, item.status], ['call_w2', '{"city":"Oslo"}', 'completed'])
    }
  }
  assert.is(args, '{"city":"Oslo"}')
  assert.ok(types.includes('response.function_call_arguments.done'))
  assert.is(types.filter((type) => type === 'response.function_call_arguments.delta').length, 4)
})

translated('previous_response_id carries the conversation (not the instructions); text.format json_schema becomes response_format', async ({ openai, fake }) => {
  const first = await openai.responses.create({ model: 'gpt-4o-mini', instructions: 'Answer in French.', input: 'Name a colour.' })
  fake.enqueue(reply({ pieces: ['{"name":"bleu"}'] }))
  const format = { type: 'json_schema' as const, name: 'colour', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }, strict: true }
  const second = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'Another, as JSON.', text: { format } })
  assert.is(second.output_text, '{"name":"bleu"}')
  const sent = lastChat(fake).body
  assert.equal(sent.messages, [
    { role: 'user', content: 'Name a colour.' },
    { role: 'assistant', content: 'Hello there!' },
    { role: 'user', content: 'Another, as JSON.' },
  ])
  assert.equal(sent.response_format, { type: 'json_schema', json_schema: { name: 'colour', schema: format.schema, strict: true } })
})

translated('GET and DELETE /v1/responses/{id}; store: false keeps nothing; an unknown previous_response_id is a 404', async ({ openai }) => {
  const made = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Keep me' })
  const fetched = await openai.responses.retrieve(made.id)
  assert.is(fetched.id, made.id)
  assert.is(fetched.output_text, 'Hello there!')
  const deleted = (await openai.responses.delete(made.id)) as unknown
  assert.equal(deleted, { id: made.id, object: 'response', deleted: true })
  assert.instance(await openai.responses.retrieve(made.id).catch((e) => e), OpenAI.NotFoundError)

  const unstored = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Forget me', store: false })
  assert.is((unstored as unknown as { store: boolean }).store, false)
  assert.instance(await openai.responses.retrieve(unstored.id).catch((e) => e), OpenAI.NotFoundError)
  const missing = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Go on', previous_response_id: unstored.id }).catch((e) => e)
  assert.instance(missing, OpenAI.NotFoundError)
  assert.is(missing.param, 'previous_response_id')
})

translated('a response expires 24 hours after it was made', async ({ openai, clock, server }) => {
  const made = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Hi' })
  clock.advance(RESPONSE_TTL_MS - 1000)
  assert.is((await openai.responses.retrieve(made.id)).id, made.id)
  clock.advance(1000)
  assert.instance(await openai.responses.retrieve(made.id).catch((e) => e), OpenAI.NotFoundError)
  assert.instance(await openai.responses.create({ model: 'gpt-4o-mini', input: 'Hi', previous_response_id: made.id }).catch((e) => e), OpenAI.NotFoundError)
  // The row itself goes when a later response sweeps the expired ones away.
  const stored = async () => (await server.services.db.select({ id: gatewayResponses.id }).from(gatewayResponses).where(eq(gatewayResponses.id, made.id))).length
  assert.is(await stored(), 1)
  await openai.responses.create({ model: 'gpt-4o-mini', input: 'Hi' })
  assert.is(await stored(), 0)
})

translated('what chat completions cannot carry is a 400 naming the field, before any upstream call', async ({ openai, fake, server }) => {
  const before = fake.requests.length
  const builtIn = await openai.responses.create({ model: 'gpt-4o-mini', input: 'News?', tools: [{ type: 'web_search' } as OpenAI.Responses.Tool] }).catch((e) => e)
  assert.instance(builtIn, OpenAI.BadRequestError)
  assert.is(builtIn.param, 'tools')
  assert.match(builtIn.message, /web_search tool is built into OpenAI's Responses API/)
  const noInput = await openai.responses.create({ model: 'gpt-4o-mini', instructions: 'Only this' }).catch((e) => e)
  assert.instance(noInput, OpenAI.BadRequestError)
  assert.is(noInput.param, 'input')
  for (const body of [{ input: 7 }, { input: [{ role: 'robot', content: 'x' }] }, { input: 'x', temperature: 3 }, { input: [{ type: 'function_call', name: 'f' }] }]) {
    const res = await server.request('POST', '/api/v1/responses', { body })
    assert.is(res.status, 400, JSON.stringify(body))
    assert.type(res.body.error.message, 'string')
  }
  assert.is(fake.requests.length, before, 'nothing went upstream')
})

translated('a stream broken off upstream ends with response.failed, never a quiet completion', async ({ openai, fake }) => {
  fake.enqueue(reply({ pieces: ['Part', 'ial'], cutAfter: { events: 1, how: 'destroy' } }))
  const types: string[] = []
  let failed: OpenAI.Responses.ResponseFailedEvent | undefined
  for await (const event of await openai.responses.create({ model: 'gpt-4o-mini', input: 'Hi', stream: true })) {
    types.push(event.type)
    if (event.type === 'response.failed') failed = event
  }
  assert.ok(failed, types.join(','))
  assert.is(failed!.response.status, 'failed')
  assert.is(failed!.response.error?.code, 'upstream_error')
  assert.not.ok(types.includes('response.completed'))
})

const native = suite<Ctx>('responses: passed through to a provider that serves them')

native.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.clock = manualClock(new Date('2026-05-01T10:00:00Z'))
  const file = providerFile(`
providers:
  oa: { base_url: "${ctx.fake.url}/v1", responses_api: true, api_key_env: FAKE_OA_KEY }
models:
  fast: { provider: oa, model: gpt-4.1-mini }
`)
  ctx.server = await startTestServer({ clock: ctx.clock.clock, env: { PLAZA_LLM_CONFIG: file, FAKE_OA_KEY: 'sk-oa-native-1' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
})
native.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

native('the request goes up as sent (unknown fields too), its model the provider\'s; the answer comes back with the name asked for', async ({ openai, fake }) => {
  const response = await openai.responses.create({ model: 'fast', input: 'Hi', include: ['reasoning.encrypted_content'], truncation: 'auto' })
  const sent = fake.requests.at(-1)!
  assert.is(sent.path, '/v1/responses')
  assert.is(sent.headers.authorization, 'Bearer sk-oa-native-1')
  assert.equal(sent.body.include, ['reasoning.encrypted_content'])
  assert.equal([sent.body.model, sent.body.input, sent.body.truncation, sent.body.stream], ['gpt-4.1-mini', 'Hi', 'auto', false])
  assert.match(response.id, /^resp_upstream_/)
  assert.is(response.model, 'fast')
  assert.is(response.output_text, 'Hello there!')
  // Kept by the provider: Plaza keeps its body for GET, and passes previous_response_id on.
  assert.is((await openai.responses.retrieve(response.id)).model, 'fast')
  await openai.responses.create({ model: 'fast', input: 'And?', previous_response_id: response.id })
  assert.is(fake.requests.at(-1)!.body.previous_response_id, response.id)
  await openai.responses.delete(response.id)
  const deletion = fake.requests.at(-1)!
  assert.equal([deletion.method, deletion.path], ['DELETE', `/v1/responses/${response.id}`])
  assert.instance(await openai.responses.retrieve(response.id).catch((e) => e), OpenAI.NotFoundError)
})

native('streamed: the provider\'s events pass through in order, the model renamed; tool calls too', async ({ openai, fake }) => {
  const events: OpenAI.Responses.ResponseStreamEvent[] = []
  for await (const event of await openai.responses.create({ model: 'fast', input: 'Hi', stream: true })) events.push(event)
  assert.is(events[0].type, 'response.created')
  assert.is((events[0] as OpenAI.Responses.ResponseCreatedEvent).response.model, 'fast')
  const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
  assert.is(done.type, 'response.completed')
  assert.is(done.response.model, 'fast')
  assert.is(events.filter((event) => event.type === 'response.output_text.delta').map((event) => (event as OpenAI.Responses.ResponseTextDeltaEvent).delta).join(''), 'Hello there!')
  assert.is(fake.requests.at(-1)!.body.stream, true)

  fake.enqueue(callTool({ id: 'call_n1', name: 'lookup', arguments: '{"q":"plaza"}' }))
  const final = await openai.responses.stream({ model: 'fast', input: 'Look it up', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }] }).finalResponse()
  const call = final.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall
  assert.equal([call.call_id, call.arguments], ['call_n1', '{"q":"plaza"}'])
})

native('a provider failure is retried, then answered in OpenAI\'s shape', async ({ openai, fake }) => {
  fake.enqueue(json(503, { error: { message: 'overloaded' } }))
  const ok = await openai.responses.create({ model: 'fast', input: 'Hi' })
  assert.is(ok.output_text, 'Hello there!')
  fake.enqueue(json(400, { error: { message: 'unknown parameter: frobnicate' } }))
  const bad = await openai.responses.create({ model: 'fast', input: 'Hi' }).catch((e) => e)
  assert.instance(bad, OpenAI.APIError)
  assert.is(bad.status, 502)
  assert.match(bad.message, /unknown parameter: frobnicate/)
})

translated.run()
native.run()
