/** OpenAI's own npm client against Plaza's /api/v1, as a user would point it there. */
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'

const client = suite<{ server: TestServer; fake: FakeUpstream; openai: OpenAI }>('chat: OpenAI npm client')

client.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: 'sk-upstream-key-1', PLAZA_LLM_MODEL: 'fake-model' } })
  // Its own retries off, so that a failure surfaces at once.
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused-by-plaza', maxRetries: 0 })
})
client.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

client('chat.completions.create answers a typed chat.completion', async ({ openai }) => {
  const completion = await openai.chat.completions.create({ model: 'modelg-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 32 })
  assert.is(completion.object, 'chat.completion')
  assert.is(completion.model, 'modelg-4o-mini')
  assert.is(completion.choices[0].message.content, 'Hello there!')
  assert.is(completion.choices[0].finish_reason, 'stop')
  assert.is(completion.usage?.total_tokens, 19)
  const extra = completion as unknown as { message: string; reasoning: string; answer: string }
  assert.is(extra.reasoning, 'The user greets me.')
  assert.is(extra.message, '<think>The user greets me.</think>Hello there!')
})

client('stream: true yields chunks, reasoning apart from content, usage at the end', async ({ openai, fake }) => {
  fake.enqueue(reply({ pieces: ['<think>Short', ' thought</think>', 'Streamed ', 'answer.'] }))
  const stream = await openai.chat.completions.create({ model: 'o1-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } })
  let content = ''
  let reasoning = ''
  let usage: OpenAI.CompletionUsage | null | undefined
  let finish: string | null = null
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined
    content += delta?.content ?? ''
    reasoning += delta?.reasoning_content ?? ''
    finish = chunk.choices[0]?.finish_reason ?? finish
    usage = chunk.usage ?? usage
  }
  assert.is(content, 'Streamed answer.')
  assert.is(reasoning, 'Short thought')
  assert.is(finish, 'stop')
  assert.is(usage?.completion_tokens, 7)
})

client('errors surface as OpenAI APIError with status and message, before and during a stream', async ({ openai, fake }) => {
  const bad = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Hi' }], temperature: 7 }).catch((e) => e)
  assert.instance(bad, OpenAI.BadRequestError)
  assert.is(bad.status, 400)
  assert.match(bad.message, /temperature must be from 0 to 2/)
  assert.is(bad.param, 'temperature')
  assert.is(bad.type, 'invalid_request_error')

  fake.enqueue(json(400, { error: { message: 'context too long' } }))
  const upstream = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(upstream, OpenAI.APIError)
  assert.is(upstream.status, 502)
  assert.match(upstream.message, /context too long/)

  fake.enqueue(reply({ pieces: ['Part', 'ial'], cutAfter: { events: 1, how: 'destroy' } }))
  const stream = await openai.chat.completions.create({ model: 'modelx-2', messages: [{ role: 'user', content: 'Hi' }], stream: true })
  let content = ''
  const cut = await (async () => {
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? ''
  })().catch((e) => e)
  assert.is(content, 'Part')
  assert.instance(cut, OpenAI.APIError, 'a cut stream throws instead of ending quietly')
  assert.match(cut.message, /ended the stream before finishing|dropped the connection/)
})

client.run()
