/**
 * What agent code needs from the gateway, driven by OpenAI's own npm client against upstreams
 * speaking OpenAI's and Anthropic's protocols: a full tool-call round trip (streamed, the
 * arguments cut across many chunks, and not), request fields passed through or translated,
 * several choices, JSON mode, images, and the model list.
 */
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { callTool, json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'

interface Ctx {
  server: TestServer
  fake: FakeUpstream
  openai: OpenAI
}

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const ask: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'developer', content: 'Use tools when they help.' },
  { role: 'user', content: 'Weather in Paris?' },
]
const ARGS = '{"city":"Paris","unit":"celsius"}'

for (const protocol of ['openai', 'anthropic'] as const) {
  const tools = suite<Ctx>(`chat tools over ${protocol}`)
  const anthropic = protocol === 'anthropic'

  tools.before(async (ctx) => {
    ctx.fake = await startFakeUpstream()
    const env = anthropic
      ? { PLAZA_LLM_BASE_URL: ctx.fake.url, PLAZA_LLM_PROVIDER: 'anthropic', PLAZA_LLM_MODEL: 'claude-test' }
      : { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'gpt-test' }
    ctx.server = await startTestServer({ env })
    ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
  })
  tools.after(async (ctx) => {
    await ctx.server.close()
    await ctx.fake.close()
  })

  tools('a tool-call round trip: the call comes back, the result goes up, the answer comes back', async ({ openai, fake }) => {
    fake.enqueue(callTool({ id: 'call_w1', name: 'get_weather', arguments: ARGS, text: 'Checking.' }))
    const first = await openai.chat.completions.create({ model: 'modelg-4o-mini', messages: ask, tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false })
    const choice = first.choices[0]
    assert.is(choice.finish_reason, 'tool_calls')
    assert.equal(choice.message.tool_calls, [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(JSON.parse(ARGS)) } }])
    assert.is(choice.message.content, 'Checking.')

    const sent = fake.requests.at(-1)!.body
    if (anthropic) {
      assert.equal(sent.tools, [{ name: 'get_weather', description: 'The weather in a city', input_schema: weatherTool.function.parameters }])
      assert.equal(sent.tool_choice, { type: 'auto', disable_parallel_tool_use: true })
      assert.is(sent.system, 'Use tools when they help.', 'a developer message is a system prompt there')
    } else {
      assert.equal(sent.tools, [weatherTool])
      assert.is(sent.tool_choice, 'auto')
      assert.is(sent.parallel_tool_calls, false)
      assert.is(sent.messages[0].role, 'developer')
    }

    fake.enqueue(reply({ pieces: ['It is 18 °C in Paris.'] }))
    const second = await openai.chat.completions.create({
      model: 'modelg-4o-mini',
      messages: [...ask, choice.message, { role: 'tool', tool_call_id: 'call_w1', content: '{"temp":18}' }],
      tools: [weatherTool],
    })
    assert.is(second.choices[0].message.content, 'It is 18 °C in Paris.')
    const followUp = fake.requests.at(-1)!.body
    if (anthropic) {
      assert.equal(followUp.messages.slice(1), [
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: JSON.parse(ARGS) }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_w1', content: '{"temp":18}' }] },
      ])
    } else {
      assert.equal(followUp.messages.slice(2), [
        { role: 'assistant', content: 'Checking.', tool_calls: choice.message.tool_calls },
        { role: 'tool', tool_call_id: 'call_w1', content: '{"temp":18}' },
      ])
    }
  })

  tools('a streamed tool call, its arguments cut across many chunks, assembles in the client', async ({ openai, fake }) => {
    fake.enqueue(callTool({ id: 'call_s1', name: 'get_weather', arguments: ARGS, pieces: 9 }))
    const stream = openai.chat.completions.stream({ model: 'modelx-2', messages: ask, tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } })
    const pieces: string[] = []
    stream.on('chunk', (chunk) => {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) if (call.function?.arguments) pieces.push(call.function.arguments)
    })
    const final = await stream.finalChatCompletion()
    assert.ok(pieces.length >= 5, `the arguments arrived in pieces (${pieces.length})`)
    assert.equal(JSON.parse(pieces.join('')), JSON.parse(ARGS))
    const call = final.choices[0].message.tool_calls![0]
    assert.equal([call.id, call.function.name, JSON.parse(call.function.arguments)], ['call_s1', 'get_weather', JSON.parse(ARGS)])
    assert.is(final.choices[0].finish_reason, 'tool_calls')
    assert.is(final.usage?.total_tokens, 39, 'usage on the last chunk')
    const sent = fake.requests.at(-1)!.body
    assert.equal(anthropic ? sent.tool_choice : sent.tool_choice, anthropic ? { type: 'tool', name: 'get_weather' } : { type: 'function', function: { name: 'get_weather' } })
    if (!anthropic) assert.equal(sent.stream_options, { include_usage: true })
  })

  tools('JSON mode: a JSON schema answer comes back as the content', async ({ openai, fake }) => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] }
    if (anthropic) fake.enqueue(callTool({ name: 'json_output', arguments: '{"answer":42}' }))
    else fake.enqueue(reply({ pieces: ['{"answer":42}'] }))
    const completion = await openai.chat.completions.create({
      model: 'modelx-2',
      messages: [{ role: 'user', content: 'Six times seven?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'Answer', schema } },
    })
    assert.equal(JSON.parse(completion.choices[0].message.content!), { answer: 42 })
    assert.is(completion.choices[0].finish_reason, 'stop')
    assert.is(completion.choices[0].message.tool_calls, undefined)
    const sent = fake.requests.at(-1)!.body
    if (anthropic) {
      assert.equal(sent.tool_choice, { type: 'tool', name: 'json_output' })
      assert.equal(sent.tools[0].input_schema, schema)
    } else {
      assert.equal(sent.response_format, { type: 'json_schema', json_schema: { name: 'Answer', schema } })
    }
  })

  tools('an image part goes up as the protocol carries images', async ({ openai, fake }) => {
    const png = 'data:image/png;base64,iVBORw0KGgo='
    await openai.chat.completions.create({
      model: 'modelx-2',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: png } }] }],
    })
    const content = fake.requests.at(-1)!.body.messages.at(-1).content
    if (anthropic) assert.equal(content, [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }])
    else assert.equal(content, [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: png } }])
  })

  tools('the model list and one model, as OpenAI clients read them', async ({ openai }) => {
    const ids: string[] = []
    for await (const model of openai.models.list()) ids.push(model.id)
    for (const name of ['modelg-4o-mini', 'o1-mini', 'chaty', 'reasoning-70b', 'copilot']) assert.ok(ids.includes(name), name)
    const one = await openai.models.retrieve('modelx-2')
    assert.equal([one.id, one.object, one.owned_by], ['modelx-2', 'model', 'env'])
  })
  tools.run()
}

const passthrough = suite<Ctx>('chat passthrough to an OpenAI-compatible upstream')

passthrough.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'gpt-test' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
})
passthrough.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

passthrough('every request field, unknown ones included, reaches the upstream; every choice comes back', async ({ server, fake }) => {
  fake.enqueue(
    json(
      200,
      {
        id: 'up',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-test',
        system_fingerprint: 'fp_1',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'One.' }, logprobs: { content: [{ token: 'One', logprob: -0.1, top_logprobs: [] }] }, finish_reason: 'stop' },
          { index: 1, message: { role: 'assistant', content: null, refusal: 'I cannot.' }, logprobs: null, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      },
      { 'x-request-id': 'req-abc' },
    ),
  )
  const body = {
    model: 'modelg-4o-mini',
    messages: [{ role: 'user', content: 'Count' }],
    n: 2,
    seed: 7,
    logprobs: true,
    top_logprobs: 2,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    logit_bias: { '50256': -100 },
    max_completion_tokens: 64,
    user: 'user-42',
    stop: 'END',
    response_format: { type: 'json_object' },
    vendor_extension: { beam: 3 },
  }
  const res = await fetch(`${server.url}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const answer = await res.json()
  assert.is(res.status, 200)
  assert.is(res.headers.get('x-upstream-request-id'), 'req-abc')
  const sent = fake.requests.at(-1)!.body
  assert.equal(sent, {
    model: 'gpt-test',
    messages: body.messages,
    n: 2,
    seed: 7,
    logprobs: true,
    top_logprobs: 2,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    logit_bias: { '50256': -100 },
    max_tokens: 64,
    user: 'user-42',
    stop: ['END'],
    response_format: { type: 'json_object' },
    vendor_extension: { beam: 3 },
  })
  assert.is(answer.choices.length, 2)
  assert.equal(answer.choices[0].logprobs, { content: [{ token: 'One', logprob: -0.1, top_logprobs: [] }] })
  assert.equal(answer.choices[1].message, { role: 'assistant', content: '', refusal: 'I cannot.' })
  assert.is(answer.system_fingerprint, 'fp_1')
})

passthrough('R1-style text without the opening <think> is split, streamed and not; upstream reasoning fields pass through', async ({ openai, fake }) => {
  fake.enqueue(reply({ pieces: ['Okay, the user', ' asks 2+2.\n', '</think>', '\n\n4'] }))
  const whole = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: '2+2?' }] })
  const message = whole.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string }
  assert.is(message.content, '4')
  assert.is(message.reasoning_content, 'Okay, the user asks 2+2.')

  // Streamed, for a model the configuration knows starts in its reasoning (an R1 distill).
  const r1 = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${fake.url}/v1`, PLAZA_LLM_MODEL: 'deepseek-r1-distill-llama-70b' } })
  try {
    fake.enqueue(reply({ pieces: ['Okay, the user', ' asks 2+2.\n</th', 'ink>\n\n', '4'] }))
    const client = new OpenAI({ baseURL: `${r1.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
    let content = ''
    let reasoning = ''
    for await (const chunk of await client.chat.completions.create({ model: 'reasoning-70b', messages: [{ role: 'user', content: '2+2?' }], stream: true })) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined
      content += delta?.content ?? ''
      reasoning += delta?.reasoning_content ?? ''
    }
    assert.is(content, '4')
    assert.is(reasoning, 'Okay, the user asks 2+2.')
  } finally {
    await r1.close()
  }

  // Any other model streaming a lone </think>: what went before is already out, but the tag never shows.
  fake.enqueue(reply({ pieces: ['Hmm.', '</think>', 'Yes.'] }))
  let streamed = ''
  for await (const chunk of await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Sure?' }], stream: true })) streamed += chunk.choices[0]?.delta?.content ?? ''
  assert.is(streamed, 'Hmm.Yes.')

  // OpenRouter's `reasoning` field comes out as reasoning_content.
  fake.enqueue(json(200, { id: 'u', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.', reasoning: 'Capital of France.' }, finish_reason: 'stop' }] }))
  const routed = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Capital?' }] })
  assert.is((routed.choices[0].message as { reasoning_content?: string }).reasoning_content, 'Capital of France.')
})

passthrough('an Anthropic upstream refuses what it cannot carry with a 400 naming the field', async ({ fake }) => {
  const claude = await startTestServer({ env: { PLAZA_LLM_BASE_URL: fake.url, PLAZA_LLM_PROVIDER: 'anthropic' } })
  try {
    const before = fake.requests.length
    for (const [body, param] of [
      [{ messages: [{ role: 'user', content: 'Hi' }], n: 2 }, 'n'],
      [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'messages'],
    ] as const) {
      const res = await claude.request('POST', '/api/v1/chat/completions', { body })
      assert.is(res.status, 400)
      assert.is(res.body.error.param, param)
    }
    assert.is(fake.requests.length, before, 'nothing reached the upstream')
  } finally {
    await claude.close()
  }
})

passthrough('an unknown model is OpenAI’s 404, for the list and for a completion', async ({ openai, server, fake }) => {
  const missing = await openai.models.retrieve('no-such-model').catch((error) => error)
  assert.instance(missing, OpenAI.NotFoundError)
  // Any other name goes upstream as asked; one the provider does not know is its 404, passed on as OpenAI's.
  fake.enqueue(json(404, { error: { message: 'The model `gpt-5` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' } }))
  const error = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(error, OpenAI.NotFoundError)
  assert.is(error.code, 'model_not_found')
  assert.match(error.message, /gpt-5. does not exist/)
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-5')
  // A configured name's upstream answering 404 is the provider failing (502), not the client's mistake.
  fake.enqueue(json(404, { error: { message: 'no such route' } }))
  const mapped = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.is(mapped.status, 502)
  assert.ok(server.url)
})

passthrough.run()
