/**
 * Deployment cooldown (LiteLLM's allowed_fails / cooldown_time): a deployment that keeps failing
 * is skipped for its fallbacks without being called, and tried again once the cooldown is over.
 * Time is the injected clock; nothing sleeps.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadChatConfig } from '../../src/server/chat/config.js'
import { createChatGateway, type ChatGateway } from '../../src/server/chat/gateway.js'
import { ConfigError } from '../../src/server/config.js'
import { manualClock } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile, USER_HI } from './helpers.js'

interface Ctx {
  flaky: FakeUpstream
  backup: FakeUpstream
  chat: ChatGateway
  clock: ReturnType<typeof manualClock>
  warnings: string[]
}

const cooldown = suite<Ctx>('chat gateway: deployment cooldown')

cooldown.before(async (ctx) => {
  ctx.flaky = await startFakeUpstream(reply({ pieces: ['from flaky'] }))
  ctx.backup = await startFakeUpstream(reply({ pieces: ['from backup'] }))
  ctx.clock = manualClock()
  ctx.warnings = []
  const file = providerFile(`
providers:
  flaky: { base_url: "${ctx.flaky.url}/v1" }
  backup: { base_url: "${ctx.backup.url}/v1" }
models:
  chaty:
    provider: flaky
    model: m-flaky
    fallbacks: [{ provider: backup, model: m-backup }]
  solo: { provider: flaky, model: m-solo }
retry: { max_retries: 0 }
router: { allowed_fails: 2, cooldown_ms: 30000 }
`)
  const warn = (message: string, detail?: Record<string, unknown>) => void ctx.warnings.push(JSON.stringify({ message, ...detail }))
  ctx.chat = createChatGateway(loadChatConfig({ PLAZA_LLM_CONFIG: file }), { now: ctx.clock.clock, logger: { error() {}, warn, info() {}, debug() {} } })
})
cooldown.after(async (ctx) => {
  await ctx.chat.close()
  await ctx.flaky.close()
  await ctx.backup.close()
})

const ask = (chat: ChatGateway, model = 'chaty') => chat.complete({ model, messages: USER_HI as Array<{ role: 'user'; content: string }>, params: {} })
const calls = (fake: FakeUpstream, model: string) => fake.requests.filter((request) => request.body.model === model).length

cooldown('after allowed_fails failures the deployment is skipped: its fallback answers without it being called; it is back after cooldown_ms', async ({ flaky, backup, chat, clock, warnings }) => {
  flaky.enqueue(json(503, { error: { message: 'overloaded' } }), json(500, { error: { message: 'boom' } }))
  assert.is((await ask(chat)).answer, 'from backup')
  clock.advance(1_000)
  assert.is((await ask(chat)).answer, 'from backup')
  assert.is(calls(flaky, 'm-flaky'), 2)
  assert.is(warnings.length, 1)
  assert.match(warnings[0], /"message":"chat deployment cooling down","provider":"flaky","upstream_model":"m-flaky"/)

  // Cooling down: straight to the fallback, the flaky deployment (now healthy again) is not called.
  for (let i = 0; i < 3; i++) {
    const result = await ask(chat)
    assert.is(result.answer, 'from backup')
    assert.is(result.provider, 'backup')
  }
  clock.advance(29_000)
  assert.is((await ask(chat)).provider, 'backup')
  assert.is(calls(flaky, 'm-flaky'), 2, 'not called during the cooldown')
  assert.is(calls(backup, 'm-backup'), 6)

  clock.advance(1_000)
  const back = await ask(chat)
  assert.is(back.answer, 'from flaky')
  assert.is(back.provider, 'flaky')
  assert.is(calls(flaky, 'm-flaky'), 3)
})

cooldown('failures spread beyond fail_window_ms, and 400s (the request, not the deployment), never cool it down', async ({ flaky, chat, clock }) => {
  flaky.enqueue(json(500, {}))
  await ask(chat)
  clock.advance(60_000)
  flaky.enqueue(json(500, {}), json(400, { error: { message: 'context too long' } }))
  await ask(chat)
  await ask(chat)
  const before = calls(flaky, 'm-flaky')
  assert.is((await ask(chat)).provider, 'flaky')
  assert.is(calls(flaky, 'm-flaky'), before + 1)
})

cooldown('a route whose every deployment is cooling down still tries them (one deployment is never refused for being cold)', async ({ flaky, chat }) => {
  flaky.enqueue(json(500, {}), json(500, {}))
  await ask(chat, 'solo').catch(() => {})
  await ask(chat, 'solo').catch(() => {})
  assert.is((await ask(chat, 'solo')).answer, 'from flaky')
  assert.is(calls(flaky, 'm-solo'), 3)
})

cooldown('router settings are validated with the rest of the file', () => {
  const file = providerFile(`
providers: { p: { base_url: "http://127.0.0.1:9/v1" } }
models: { default: { provider: p, model: m } }
router: { allowed_fails: 0 }
`)
  assert.throws(() => loadChatConfig({ PLAZA_LLM_CONFIG: file }), (error: unknown) => error instanceof ConfigError && /router\.allowed_fails/.test((error as Error).message))
  const defaults = loadChatConfig({ PLAZA_LLM_BASE_URL: 'http://127.0.0.1:9/v1' })!
  assert.equal(defaults.router, { allowedFails: 3, failWindowMs: 60_000, cooldownMs: 30_000 })
})

cooldown.run()
