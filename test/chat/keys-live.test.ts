/**
 * The gateway's rule counts live keys: revoking the only key opens it again (unless
 * PLAZA_GATEWAY_AUTH=required), in this process at once and in another within KEY_CACHE_MS; a 401
 * says how every kind of client sends a key.
 */
import OpenAI from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KEY_CACHE_MS } from '../../src/server/chat/keys/access.js'
import { createGatewayKey, revokeGatewayKey } from '../../src/server/chat/keys/store.js'
import { manualClock, startTestServer } from '../helpers/server.js'
import { startFakeUpstream } from './fake-upstream.js'

const live = suite('chat: the gateway counts live keys')

const hi = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] }

live('revoking the only key opens the gateway again; a 401 names Bearer, x-api-key and PLAZA_GATEWAY_KEY', async () => {
  const fake = await startFakeUpstream()
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, env: { PLAZA_LLM_BASE_URL: `${fake.url}/v1` } })
  try {
    const open = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: 'anything', maxRetries: 0 })
    assert.is((await open.chat.completions.create(hi)).object, 'chat.completion')
    const access = await server.services.gatewayAccess()
    await access.createKey({ name: 'only' })
    const refused = await open.chat.completions.create(hi).catch((e) => e)
    assert.instance(refused, OpenAI.AuthenticationError)
    for (const how of [/Authorization: Bearer/, /x-api-key/, /PLAZA_GATEWAY_KEY/, /plaza admin keys create/]) assert.match(refused.message, how)
    const none = await server.request('POST', '/api/v1/chat/completions', { body: hi })
    assert.match(none.body.error.message, /^This gateway requires an API key: send it as Authorization: Bearer <key>/)

    await access.revokeKey('only')
    assert.ok(await access.isOpen())
    assert.is((await open.chat.completions.create(hi)).object, 'chat.completion', 'open again at once in this process')

    // A key created and revoked by another process (`plaza admin keys`): seen within KEY_CACHE_MS.
    await createGatewayKey(server.services.db, { name: 'elsewhere' }, clock.clock())
    clock.advance(KEY_CACHE_MS)
    assert.instance(await open.chat.completions.create(hi).catch((e) => e), OpenAI.AuthenticationError)
    await revokeGatewayKey(server.services.db, 'elsewhere', clock.clock())
    assert.instance(await open.chat.completions.create(hi).catch((e) => e), OpenAI.AuthenticationError, 'not before the cache expires')
    clock.advance(KEY_CACHE_MS)
    assert.is((await open.chat.completions.create(hi)).object, 'chat.completion')
  } finally {
    await server.close()
    await fake.close()
  }
})

live('PLAZA_GATEWAY_AUTH=required: still closed after the last key is revoked', async () => {
  const fake = await startFakeUpstream()
  const server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${fake.url}/v1`, PLAZA_GATEWAY_AUTH: 'required' } })
  try {
    const access = await server.services.gatewayAccess()
    const { key } = await access.createKey({ name: 'first' })
    const client = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: key, maxRetries: 0 })
    assert.is((await client.chat.completions.create(hi)).object, 'chat.completion')
    await access.revokeKey('first')
    assert.not.ok(await access.isOpen())
    const revoked = await client.chat.completions.create(hi).catch((e) => e)
    assert.instance(revoked, OpenAI.AuthenticationError)
    assert.match(revoked.message, /revoked/)
    assert.is((await server.request('POST', '/api/v1/chat/completions', { body: hi })).status, 401)
  } finally {
    await server.close()
    await fake.close()
  }
})

live.run()
