/**
 * GET|POST /api/chat: conversations kept on the server, through the real server against a loopback
 * provider, with a manual clock for the 24-hour expiry.
 */
import { count, eq } from 'drizzle-orm'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chatConversations, chatMessages } from '../../src/server/db/schema.js'
import { STORED_MESSAGES } from '../../src/server/chat/conversations.js'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'

type Ctx = { server: TestServer; fake: FakeUpstream; clock: ReturnType<typeof manualClock> }
const conversations = suite<Ctx>('chat: conversations kept on the server')

conversations.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.clock = manualClock()
  ctx.server = await startTestServer({ clock: ctx.clock.clock, env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: 'sk-conv-SECRET-1' } })
})
conversations.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

const rows = async (server: TestServer) => {
  const [{ n: conversations }] = await server.services.db.select({ n: count() }).from(chatConversations)
  const [{ n: messages }] = await server.services.db.select({ n: count() }).from(chatMessages)
  return { conversations, messages }
}

conversations('a conversation starts without an id, and the next message carries the history (POST then GET)', async ({ server, fake }) => {
  const first = await server.request('POST', '/api/chat', { body: { content: 'My name is Ada.', system: 'You are terse.' } })
  assert.is(first.status, 200)
  assert.match(first.body.conversationId, /^[A-Za-z0-9_-]{22}$/)
  assert.is(first.body.answer, 'Hello there!')
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'My name is Ada.' },
  ])
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o-mini', 'the alias chat goes upstream as the model it stands for')

  const id = first.body.conversationId
  const second = await server.request('GET', `/api/chat?content=${encodeURIComponent('What is my name?')}&conversationId=${id}`)
  assert.is(second.status, 200)
  assert.is(second.body.conversationId, id)
  // The assistant's turn is stored as the model wrote it, reasoning block included.
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'My name is Ada.' },
    { role: 'assistant', content: '<think>The user greets me.</think>Hello there!' },
    { role: 'user', content: 'What is my name?' },
  ])
})

conversations('unknown, malformed and expired ids: 404 or 400, and nothing is called or written', async ({ server, fake, clock }) => {
  const started = await server.request('POST', '/api/chat', { body: { content: 'Hello' } })
  const id = started.body.conversationId
  const before = { calls: fake.requests.length, ...(await rows(server)) }

  const unknown = await server.request('POST', '/api/chat', { body: { content: 'Hi', conversationId: 'A'.repeat(22) } })
  assert.is(unknown.status, 404)
  assert.match(unknown.body.message, /unknown, expired/)
  const malformed = await server.request('GET', '/api/chat?content=Hi&conversationId=../../etc')
  assert.is(malformed.status, 400)
  const empty = await server.request('POST', '/api/chat', { body: { content: '' } })
  assert.is(empty.status, 400)
  const notJson = await server.request('POST', '/api/chat', { raw: '{"content":', headers: { 'content-type': 'application/json' } })
  assert.is(notJson.status, 400)

  // 23 hours idle: still there. Another 24 after its last message: gone.
  clock.advance(23 * 3600_000)
  const alive = await server.request('POST', '/api/chat', { body: { content: 'Still there?', conversationId: id } })
  assert.is(alive.status, 200)
  clock.advance(24 * 3600_000 + 1)
  const expired = await server.request('POST', '/api/chat', { body: { content: 'And now?', conversationId: id } })
  assert.is(expired.status, 404)
  assert.is(fake.requests.length, before.calls + 1, 'only the one live message reached the provider')

  // The next new conversation sweeps the expired ones away (their messages cascade).
  const fresh = await server.request('POST', '/api/chat', { body: { content: 'New start' } })
  assert.is(fresh.status, 200)
  const gone = await server.services.db.select().from(chatMessages).where(eq(chatMessages.conversationId, id))
  assert.is(gone.length, 0)
  assert.is((await server.services.db.select().from(chatConversations).where(eq(chatConversations.id, id))).length, 0)
})

conversations('a failed call stores nothing: no conversation, no half turn', async ({ server, fake }) => {
  const started = await server.request('POST', '/api/chat', { body: { content: 'Keep this' } })
  const id = started.body.conversationId
  const before = await rows(server)
  fake.enqueue(json(400, { error: { message: 'context too long' } }))
  const failedNew = await server.request('POST', '/api/chat', { body: { content: 'Fails' } })
  assert.ok(failedNew.status >= 400 && failedNew.status !== 500)
  fake.enqueue(json(400, { error: { message: 'context too long' } }))
  const failedNext = await server.request('POST', '/api/chat', { body: { content: 'Fails too', conversationId: id } })
  assert.ok(failedNext.status >= 400 && failedNext.status !== 500)
  assert.equal(await rows(server), before)
})

conversations('history sent upstream is bounded, and old messages are pruned past the cap (the system message stays)', async ({ server, fake }) => {
  const first = await server.request('POST', '/api/chat', { body: { content: 'm0', system: 'sys' } })
  const id = first.body.conversationId
  fake.enqueue(...Array.from({ length: 120 }, () => reply({ pieces: ['ok'] })))
  for (let i = 1; i <= 110; i++) {
    const res = await server.request('POST', '/api/chat', { body: { content: `m${i}`, conversationId: id } })
    assert.is(res.status, 200)
  }
  const sent = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>
  assert.equal(sent[0], { role: 'system', content: 'sys' })
  assert.equal(sent.at(-1), { role: 'user', content: 'm110' })
  assert.is(sent.length, 1 + 40 + 1, 'the system message, the last 40 messages and the new one')
  const stored = await server.services.db.select().from(chatMessages).where(eq(chatMessages.conversationId, id))
  assert.ok(stored.length <= STORED_MESSAGES + 1, `${stored.length} stored`)
  assert.ok(stored.some((message) => message.seq === 0 && message.role === 'system'))
})

const keyed = suite<{ server: TestServer; fake: FakeUpstream }>('chat: conversations belong to the key that started them')
keyed.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1` } })
})
keyed.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

keyed('another key cannot continue (or learn of) a conversation', async ({ server }) => {
  const access = await server.services.gatewayAccess()
  const alice = await access.createKey({ name: 'alice' })
  const bob = await access.createKey({ name: 'bob' })
  const started = await server.request('POST', '/api/chat', { body: { content: 'secret plans' }, token: alice.key })
  assert.is(started.status, 200)
  const id = started.body.conversationId
  const stolen = await server.request('POST', '/api/chat', { body: { content: 'what were the plans?', conversationId: id }, token: bob.key })
  assert.is(stolen.status, 404)
  const own = await server.request('POST', '/api/chat', { body: { content: 'go on', conversationId: id }, token: alice.key })
  assert.is(own.status, 200)
  const anonymous = await server.request('POST', '/api/chat', { body: { content: 'hi' } })
  assert.is(anonymous.status, 401)
})

conversations.run()
keyed.run()
