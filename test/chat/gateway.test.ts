/**
 * The gateway on its own, with an injected sleep: backoff and Retry-After are checked without
 * waiting, and everything it logs is checked for keys.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadChatConfig } from '../../src/server/chat/config.js'
import { GatewayError } from '../../src/server/chat/errors.js'
import { createChatGateway, type ChatGateway } from '../../src/server/chat/gateway.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile, USER_HI } from './helpers.js'

const KEY = 'sk-gateway-SECRET-9876'
const gateway = suite<{ fake: FakeUpstream; chat: ChatGateway; sleeps: number[]; logs: string[] }>('chat gateway: retries, backoff, logs')

gateway.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.sleeps = []
  ctx.logs = []
  const file = providerFile(`
providers:
  up: { base_url: "${ctx.fake.url}/v1", api_key_env: UP_KEY }
models:
  default: { provider: up, model: m }
retry: { max_retries: 3, base_delay_ms: 200, max_delay_ms: 5000 }
`)
  const line = (message: string, detail?: Record<string, unknown>) => void ctx.logs.push(JSON.stringify({ message, ...detail }))
  ctx.chat = createChatGateway(loadChatConfig({ PLAZA_LLM_CONFIG: file, UP_KEY: KEY }), {
    sleep: async (ms) => void ctx.sleeps.push(ms),
    random: () => 1,
    logger: { error: line, warn: line, info: line, debug: line },
  })
})
gateway.before.each((ctx) => {
  ctx.sleeps.length = 0
  ctx.logs.length = 0
})
gateway.after(async (ctx) => {
  await ctx.chat.close()
  await ctx.fake.close()
})

const request = { model: 'chaty', messages: USER_HI as Array<{ role: 'user'; content: string }>, params: {} }

gateway('backs off exponentially on 5xx and dropped connections, then succeeds', async ({ fake, chat, sleeps }) => {
  const drop = (_req: unknown, res: { socket: { destroy(): void } | null }) => res.socket?.destroy()
  fake.enqueue(json(500, { error: { message: 'boom' } }), drop as never, json(502, 'bad gateway'))
  const result = await chat.complete(request)
  assert.is(result.answer, 'Hello there!')
  assert.equal(sleeps, [200, 400, 800])
})

gateway('honours Retry-After (seconds or a date) within the cap; past the cap it gives up on that target at once', async ({ fake, chat, sleeps }) => {
  fake.enqueue(json(429, {}, { 'retry-after': '2' }))
  await chat.complete(request)
  assert.equal(sleeps, [2000])

  sleeps.length = 0
  fake.enqueue(json(429, { error: { message: 'slow down' } }, { 'retry-after': '120' }))
  try {
    await chat.complete(request)
    assert.unreachable('a Retry-After past max_delay_ms is not waited for')
  } catch (error) {
    assert.instance(error, GatewayError)
    assert.is((error as GatewayError).status, 502)
    assert.match((error as GatewayError).message, /answered 429: slow down/)
  }
  assert.equal(sleeps, [])
})

gateway('gives up after max_retries and says what the upstream said; 4xx are not retried', async ({ fake, chat, sleeps }) => {
  fake.enqueue(...Array.from({ length: 4 }, () => json(503, { error: { message: 'overloaded' } })))
  const error = await chat.complete(request).catch((e) => e)
  assert.instance(error, GatewayError)
  assert.is(error.status, 502)
  assert.is(error.code, 'upstream_error')
  assert.equal(sleeps, [200, 400, 800])

  sleeps.length = 0
  fake.enqueue(json(404, { error: { message: 'model m not found' } }))
  const notFound = await chat.complete(request).catch((e) => e)
  assert.match(notFound.message, /answered 404: model m not found/)
  assert.equal(sleeps, [])
})

gateway('a stream is retried before its first piece arrives; afterwards a cut is an error', async ({ fake, chat, sleeps }) => {
  fake.enqueue(reply({ pieces: ['never'], cutAfter: { events: 0, how: 'destroy' } }))
  const stream = await chat.stream(request)
  let text = ''
  for await (const event of stream.events) if (event.type === 'delta') text += event.content ?? ''
  assert.is(text, 'Hello there!')
  assert.equal(sleeps, [200])

  fake.enqueue(reply({ pieces: ['Half', ' way'], cutAfter: { events: 1, how: 'destroy' } }))
  const cut = await chat.stream(request)
  const seen: string[] = []
  const error = await (async () => {
    for await (const event of cut.events) if (event.type === 'delta') seen.push(event.content ?? '')
  })().catch((e) => e)
  assert.equal(seen, ['Half'])
  assert.instance(error, GatewayError)
  assert.is(error.status, 502)
})

gateway('keys never reach the log, even when the upstream echoes them', async ({ fake, chat, logs }) => {
  fake.enqueue(json(401, { error: { message: `Incorrect API key provided: ${KEY}` } }))
  const error = await chat.complete(request).catch((e) => e)
  assert.not.match(error.message, KEY)
  assert.ok(logs.length > 0, 'the failure was logged')
  for (const line of logs) assert.not.match(line, KEY)
  assert.match(logs.join('\n'), /\[redacted\]/)
  assert.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${KEY}`, 'the key did go upstream')
})

gateway.run()
