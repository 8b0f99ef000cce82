import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import { silentLogger } from '../../src/server/logger.js'
import { manualClock, registerUser, startTestServer, tempDir } from '../helpers/server.js'

test('health answers 200 in the envelope', async () => {
  const server = await startTestServer()
  const res = await server.request('GET', '/health')
  assert.is(res.status, 200)
  assert.equal(Object.keys(res.body).sort(), ['data', 'message', 'status', 'timestamp'])
  assert.is(res.body.status, 'success')
  assert.ok(Number.isInteger(res.body.timestamp))
  assert.ok(Math.abs(res.body.timestamp - Date.now() / 1000) < 60, 'timestamp is in Unix seconds')
  await server.close()
})

test('unknown paths are 404 and a known path with another method is 405, both in the envelope', async () => {
  const server = await startTestServer()
  for (const path of ['/nope', '/api/mobile/nope', '/api/mobile/auth/login/extra', '/api/unknown']) {
    const res = await server.request('GET', path)
    assert.is(res.status, 404, path)
    assert.is(res.body.status, 'error')
    assert.is(res.body.data, null)
  }
  const wrongMethod = await server.request('GET', '/api/mobile/auth/login')
  assert.is(wrongMethod.status, 405)
  assert.is(wrongMethod.headers.get('allow'), 'POST')
  assert.is(wrongMethod.body.status, 'error')
  await server.close()
})

test('malformed JSON and non-object bodies are 400', async () => {
  const server = await startTestServer()
  const headers = { 'content-type': 'application/json' }
  const broken = await server.request('POST', '/api/mobile/auth/login', { raw: '{"email": "a@b.co",', headers })
  assert.is(broken.status, 400)
  assert.match(broken.body.message, /JSON/)
  const array = await server.request('POST', '/api/mobile/auth/login', { raw: '[1,2]', headers })
  assert.is(array.status, 400)
  await server.close()
})

test('a body over the limit is 413 and the server stays healthy', async () => {
  const server = await startTestServer()
  const res = await server.request('POST', '/api/mobile/auth/login', { raw: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }) })
  assert.is(res.status, 413)
  assert.is(res.body.status, 'error')
  assert.is((await server.request('GET', '/health')).status, 200)
  await server.close()
})

test('5 failed logins a minute per address, then 429 with Retry-After', async () => {
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, rateLimits: DEFAULT_RATE_LIMITS })
  const attempt = () => server.request('POST', '/api/mobile/auth/login', { body: { email: 'a@example.com', password: 'password1' } })
  for (let i = 0; i < 5; i++) assert.is((await attempt()).status, 401)
  clock.advance(20_000)
  const limited = await attempt()
  assert.is(limited.status, 429)
  assert.is(limited.body.status, 'error')
  assert.is(limited.headers.get('retry-after'), '40')
  clock.advance(40_000)
  assert.is((await attempt()).status, 401)
  await server.close()
})

test('other operations allow 100 requests a minute per user', async () => {
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, rateLimits: { ...DEFAULT_RATE_LIMITS, auth: { max: 100, windowMs: 60_000 } } })
  const user = await registerUser(server)
  const other = await registerUser(server)
  const statuses = await Promise.all(Array.from({ length: 101 }, () => server.request('GET', '/api/mobile/user/profile', { token: user.token })))
  assert.is(statuses.filter((r) => r.status === 200).length, 100)
  assert.is(statuses.filter((r) => r.status === 429).length, 1)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: other.token })).status, 200, 'limits are per user')
  await server.close()
})

test('an unexpected failure is a 500 with a generic message; the detail goes to the log only', async () => {
  const lines: string[] = []
  const server = await startTestServer({ logger: { ...silentLogger, error: (message, detail) => lines.push(message + JSON.stringify(detail)) } })
  const user = await registerUser(server)
  await server.services.db.run(sql`DROP TABLE stories`)
  const res = await server.request('GET', '/api/mobile/user/profile', { token: user.token })
  assert.is(res.status, 500)
  assert.equal(res.body, { status: 'error', message: 'Internal server error', data: null, timestamp: res.body.timestamp })
  assert.ok(lines.some((line) => line.includes('stories')), 'the log has the detail')
  const trpc = await fetch(`${server.url}/trpc/users.profile`, { headers: { authorization: `Bearer ${user.token}` } })
  assert.is(trpc.status, 500)
  const text = await trpc.text()
  assert.not.match(text, /stories|SQLITE/i)
  await server.close()
})

test('the local database runs in WAL mode with foreign keys on, and data survives a restart', async () => {
  const dataDir = tempDir()
  const first = await startTestServer({ dataDir })
  const [mode] = await first.services.db.all<{ journal_mode: string }>(sql`PRAGMA journal_mode`)
  assert.is(mode.journal_mode, 'wal')
  const [fk] = await first.services.db.all<{ foreign_keys: number }>(sql`PRAGMA foreign_keys`)
  assert.is(fk.foreign_keys, 1)
  const user = await registerUser(first, 'survivor')
  await first.close()

  const second = await startTestServer({ dataDir })
  const res = await second.request('GET', '/api/mobile/user/profile', { token: user.token })
  assert.is(res.status, 200)
  assert.is(res.body.data.username, 'survivor')
  await second.close()
})

test.run()
