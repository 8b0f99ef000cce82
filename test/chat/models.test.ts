/**
 * Model names as a new user meets them with OpenAI's client: real names pass through, the spec's
 * aliases go upstream as names the provider knows, `provider/model` routes with several providers,
 * and `GET /v1/models` lists the aliases plus what each provider's own models endpoint lists
 * (cached, refreshed in the background). The providers are loopback servers (fake-upstream.ts).
 */
import OpenAI from 'openai'
import { Agent } from 'undici'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { ProviderConfig } from '../../src/server/chat/config.js'
import { createModelLists, LIST_TTL_MS } from '../../src/server/chat/model-lists.js'
import { CHAT_MODEL_ALIASES } from '../../src/shared/schemas/chat.js'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile } from './helpers.js'

type Ctx = { server: TestServer; fake: FakeUpstream; openai: OpenAI }

const env = suite<Ctx>('model names: PLAZA_LLM_BASE_URL alone')

env.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: 'sk-names-1' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
})
env.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

env('a real model name goes upstream as asked; an alias as the model it stands for, never as itself', async ({ openai, fake }) => {
  const real = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(real.model, 'gpt-4o-mini')
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o-mini')
  await openai.chat.completions.create({ model: 'qwen2.5:7b-instruct', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(fake.requests.at(-1)!.body.model, 'qwen2.5:7b-instruct')
  for (const [alias, upstream] of [
    ['modelg-4o-mini', 'gpt-4o-mini'],
    ['modelc-3-haiku-20240307', 'claude-3-haiku-20240307'],
    ['modelg-4o-2024-08-06', 'gpt-4o-2024-08-06'],
  ]) {
    const answer = await openai.chat.completions.create({ model: alias, messages: [{ role: 'user', content: 'Hi' }] })
    assert.is(answer.model, alias, 'the answer names what was asked for')
    assert.is(fake.requests.at(-1)!.body.model, upstream, alias)
  }
  // The fixed operations too.
  const chaty = await fetch(`${openai.baseURL.replace(/\/v1$/, '')}/chaty`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }) })
  assert.is(chaty.status, 200)
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o-mini')
})

env('GET /v1/models: the aliases, then the provider\'s own list, read once and kept', async ({ openai, fake }) => {
  const listed = (await openai.models.list()).data.map((model) => model.id)
  for (const alias of CHAT_MODEL_ALIASES) assert.ok(listed.includes(alias), alias)
  assert.ok(listed.includes('fake-large') && listed.includes('fake-small'), listed.join(','))
  const large = (await openai.models.list()).data.find((model) => model.id === 'fake-large')!
  assert.equal([large.owned_by, large.created], ['env', 1_700_000_000])
  assert.is(fake.modelLists, 1, 'the list is cached')
  assert.is((await openai.models.retrieve('fake-small')).id, 'fake-small')
  assert.is((await openai.models.retrieve('modelx-2')).owned_by, 'env')
  assert.instance(await openai.models.retrieve('not-listed').catch((e) => e), OpenAI.NotFoundError)
})

const several = suite<Ctx & { claude: FakeUpstream; bare: FakeUpstream }>('model names: several providers in the file')

several.before(async (ctx) => {
  ctx.fake = await startFakeUpstream(undefined, { models: ['gpt-4.1', 'gpt-4.1-mini'] })
  ctx.claude = await startFakeUpstream(undefined, { models: ['claude-sonnet-4-5'] })
  ctx.bare = await startFakeUpstream(undefined, { models: null })
  const file = providerFile(`
providers:
  oa: { base_url: "${ctx.fake.url}/v1" }
  claude: { type: anthropic, base_url: "${ctx.claude.url}", api_key_env: FAKE_CLAUDE_KEY }
  local: { base_url: "${ctx.bare.url}/v1" }
models:
  team-default: { provider: oa, model: gpt-4.1-mini }
`)
  ctx.server = await startTestServer({ env: { PLAZA_LLM_CONFIG: file, FAKE_CLAUDE_KEY: 'sk-claude-names' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
})
several.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
  await ctx.claude.close()
  await ctx.bare.close()
})

several('provider/model routes to that provider with the model as is; the file maps its own names; a bare unknown name is a 404', async ({ openai, fake, claude, bare }) => {
  await openai.chat.completions.create({ model: 'oa/gpt-4.1', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4.1')
  const viaClaude = await openai.chat.completions.create({ model: 'claude/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(viaClaude.model, 'claude/claude-sonnet-4-5')
  assert.equal([claude.requests.at(-1)!.path, claude.requests.at(-1)!.body.model], ['/v1/messages', 'claude-sonnet-4-5'])
  await openai.chat.completions.create({ model: 'local/meta-llama/Llama-3.3-70B-Instruct', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(bare.requests.at(-1)!.body.model, 'meta-llama/Llama-3.3-70B-Instruct')
  await openai.chat.completions.create({ model: 'team-default', messages: [{ role: 'user', content: 'Hi' }] })
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4.1-mini')
  const unknown = await openai.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e)
  assert.instance(unknown, OpenAI.NotFoundError)
  assert.is(unknown.code, 'model_not_found')
})

several('GET /v1/models lists each provider\'s models as provider/model (Anthropic\'s list too); one without a list lists nothing', async ({ openai, claude }) => {
  const ids = (await openai.models.list()).data.map((model) => model.id)
  assert.ok(ids.includes('team-default'))
  assert.ok(ids.includes('oa/gpt-4.1') && ids.includes('oa/gpt-4.1-mini'), ids.join(','))
  assert.ok(ids.includes('claude/claude-sonnet-4-5'), ids.join(','))
  assert.not.ok(ids.some((id) => id.startsWith('local/')))
  assert.is(claude.modelLists, 1)
  // A listed name with a slash, as OpenAI's client sends it (encoded).
  const one = await openai.models.retrieve('claude/claude-sonnet-4-5')
  assert.equal([one.id, one.owned_by], ['claude/claude-sonnet-4-5', 'claude'])
})

several('a key with an allow-list sees only its names, the providers\' ones included', async ({ server }) => {
  const access = await server.services.gatewayAccess()
  const { key } = await access.createKey({ name: 'names-only', models: ['oa/gpt-4.1', 'team-default'] })
  try {
    const client = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: key, maxRetries: 0 })
    assert.equal((await client.models.list()).data.map((model) => model.id).sort(), ['oa/gpt-4.1', 'team-default'])
    assert.instance(await client.models.retrieve('oa/gpt-4.1-mini').catch((e) => e), OpenAI.NotFoundError)
  } finally {
    await access.revokeKey('names-only')
  }
})

const lists = suite('model names: provider lists kept and refreshed in the background')

lists('a stale list is answered while it refreshes; a failed read lists nothing and is tried again sooner', async () => {
  const fake = await startFakeUpstream(undefined, { models: ['one'] })
  const clock = manualClock()
  const dispatcher = new Agent()
  const provider: ProviderConfig = { name: 'p', type: 'openai', baseUrl: `${fake.url}/v1`, timeoutMs: 5000, extendedSampling: true, headers: {}, anthropicVersion: '2023-06-01', responsesApi: false }
  const lists = createModelLists({ providers: [provider], bare: provider, dispatcher: async () => dispatcher, now: () => clock.clock().getTime(), secrets: [] })
  try {
    assert.equal((await lists.list()).map((model) => model.id), ['one'])
    fake.models = ['one', 'two']
    clock.advance(LIST_TTL_MS - 1)
    assert.equal((await lists.list()).map((model) => model.id), ['one'], 'fresh: not read again')
    assert.is(fake.modelLists, 1)
    clock.advance(1)
    assert.equal((await lists.list()).map((model) => model.id), ['one'], 'stale: answered at once, as it was')
    await lists.settled()
    assert.is(fake.modelLists, 2)
    assert.equal((await lists.list()).map((model) => model.id), ['one', 'two'], 'the refreshed list')

    fake.models = null
    clock.advance(LIST_TTL_MS)
    await lists.list()
    await lists.settled()
    assert.equal((await lists.list()).map((model) => model.id), ['one', 'two'], 'a failed refresh keeps the last list')
    fake.models = ['three']
    clock.advance(60_000)
    await lists.list()
    await lists.settled()
    assert.equal((await lists.list()).map((model) => model.id), ['three'], 'and is tried again after a minute')
  } finally {
    await dispatcher.close()
    await fake.close()
  }
})

env.run()
several.run()
lists.run()
