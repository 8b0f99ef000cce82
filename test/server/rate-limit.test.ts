import { rmSync } from 'node:fs'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULT_RATE_LIMITS, loadConfig, type RateLimits } from '../../src/server/config.js'
import { openConnection } from '../../src/server/db/connection.js'
import { silentLogger } from '../../src/server/logger.js'
import { createServices, type Clock, type Services } from '../../src/server/services.js'
import { manualClock, registerUser, startTestServer, tempDir } from '../helpers/server.js'

const LIMITS: RateLimits = { ...DEFAULT_RATE_LIMITS, default: { max: 10, windowMs: 60_000 } }

/** One "process": its own Services (own database connection) over the data directory. */
function open(dataDir: string, clock: Clock, limits: RateLimits | false = LIMITS): Promise<Services> {
  return createServices(loadConfig({ dataDir, rateLimits: limits }, {}), { clock, logger: silentLogger })
}

const allowedOf = (verdicts: { allowed: boolean }[]) => verdicts.filter((v) => v.allowed).length

test('50 concurrent hits against a limit of 10 let exactly 10 through', async () => {
  const dataDir = tempDir()
  const services = await open(dataDir, manualClock().clock)
  const verdicts = await Promise.all(Array.from({ length: 50 }, () => services.limiter!.hit('default', 'user:1')))
  assert.is(allowedOf(verdicts), 10)
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('the counts of concurrent requests commit together (group commit), not each in a transaction of its own', async () => {
  const dataDir = tempDir()
  // No checkpointer thread (maintenance off): the WAL keeps every frame the counts write.
  const services = await createServices(loadConfig({ dataDir, rateLimits: LIMITS }, {}), { clock: manualClock().clock, logger: silentLogger, maintenance: false })
  const outside = openConnection(path.join(dataDir, 'plaza.db'))
  outside.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const verdicts = await Promise.all(Array.from({ length: 50 }, (_, i) => services.limiter!.hit('default', `user:${i}`)))
  assert.is(allowedOf(verdicts), 50)
  // Frames in the WAL: each commit writes every page it changed (the table's leaf, its key index,
  // the window index), so 50 transactions of their own wrote about 150; a group writes each once.
  const [, frames] = outside.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw(true).get() as number[]
  assert.ok(frames > 0 && frames < 30, `${frames} WAL frames for 50 counts`)
  const counted = outside.prepare("SELECT count(*) FROM rate_limits WHERE key LIKE 'default:user:%'").raw(true).get() as number[]
  assert.is(counted[0], 50)
  outside.close()
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('two processes on one data directory share the counters, even hitting at the same time', async () => {
  const dataDir = tempDir()
  const clock = manualClock().clock
  const first = await open(dataDir, clock)
  const second = await open(dataDir, clock)
  const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? first : second).limiter!.hit('default', 'user:1')))
  assert.is(allowedOf(verdicts), 10)
  assert.not.ok((await second.limiter!.hit('default', 'user:1')).allowed)
  assert.ok((await second.limiter!.hit('default', 'user:2')).allowed, 'other keys have their own count')
  await first.close()
  await second.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('counters survive a restart, and a new window starts once the old one has passed', async () => {
  const dataDir = tempDir()
  const clock = manualClock()
  const before = await open(dataDir, clock.clock)
  for (let i = 0; i < 10; i++) assert.ok((await before.limiter!.hit('default', 'user:1')).allowed)
  await before.close()
  clock.advance(15_000)
  const after = await open(dataDir, clock.clock)
  const refused = await after.limiter!.hit('default', 'user:1')
  assert.equal(refused, { allowed: false, retryAfter: 45, remaining: 0 })
  clock.advance(45_000)
  assert.equal(await after.limiter!.hit('default', 'user:1'), { allowed: true, retryAfter: 60, remaining: 9 })
  await after.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('classes have their own limits and windows; peek counts nothing', async () => {
  const dataDir = tempDir()
  const services = await open(dataDir, manualClock().clock)
  const limiter = services.limiter!
  for (let i = 0; i < 5; i++) assert.ok((await limiter.hit('auth', 'ip:1.2.3.4')).allowed)
  assert.not.ok((await limiter.peek('auth', 'ip:1.2.3.4')).allowed)
  assert.not.ok((await limiter.hit('auth', 'ip:1.2.3.4')).allowed)
  assert.ok((await limiter.hit('default', 'ip:1.2.3.4')).allowed, 'the same key in another class is another counter')
  for (let i = 0; i < 3; i++) assert.ok((await limiter.peek('upload', 'user:1')).allowed)
  const [row] = await services.db.all<{ n: number }>(sql`SELECT count(*) AS n FROM rate_limits WHERE key LIKE 'upload:%'`)
  assert.is(row.n, 0)
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('rows of ended windows are swept, at most once a minute', async () => {
  const dataDir = tempDir()
  const clock = manualClock()
  const services = await open(dataDir, clock.clock)
  const keys = async () => (await services.db.all<{ key: string }>(sql`SELECT key FROM rate_limits ORDER BY key`)).map((row) => row.key)
  await services.limiter!.hit('default', 'user:old')
  clock.advance(30_000)
  await services.limiter!.hit('default', 'user:recent')
  clock.advance(40_000)
  await services.limiter!.hit('default', 'user:new')
  assert.equal(await keys(), ['default:user:new', 'default:user:recent'])
  clock.advance(30_000)
  await services.limiter!.hit('default', 'user:new')
  assert.equal(await keys(), ['default:user:new', 'default:user:recent'], 'no second sweep within the minute')
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('PLAZA_RATE_LIMITS=off leaves no limiter and counts nothing', async () => {
  const dataDir = tempDir()
  const services = await createServices(loadConfig({ dataDir }, { PLAZA_RATE_LIMITS: 'off' }), { logger: silentLogger })
  assert.is(services.limiter, null)
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('a limit survives a server restart over HTTP', async () => {
  const dataDir = tempDir()
  const clock = manualClock()
  const login = (server: Awaited<ReturnType<typeof startTestServer>>) =>
    server.request('POST', '/api/mobile/auth/login', { body: { email: 'a@example.com', password: 'password1' } })
  const first = await startTestServer({ dataDir, clock: clock.clock, rateLimits: DEFAULT_RATE_LIMITS })
  for (let i = 0; i < 5; i++) assert.is((await login(first)).status, 401)
  await first.close()
  const second = await startTestServer({ dataDir, clock: clock.clock, rateLimits: DEFAULT_RATE_LIMITS })
  assert.is((await login(second)).status, 429)
  await second.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const TOKEN_ROUTES: [string, string][] = [
  ['GET', '/api/mobile/user/profile'],
  ['GET', '/trpc/users.profile'],
]

test('invalid tokens count against the address: 5 are 401, then 429 with Retry-After before any token is looked up', async () => {
  for (const [method, route] of TOKEN_ROUTES) {
    const clock = manualClock()
    const server = await startTestServer({ clock: clock.clock, rateLimits: DEFAULT_RATE_LIMITS })
    const valid = await registerUser(server)
    for (let i = 0; i < 5; i++) assert.is((await server.request(method, route, { token: `guess${i}` })).status, 401, route)
    clock.advance(10_000)
    const limited = await server.request(method, route, { token: 'guess5' })
    assert.is(limited.status, 429, route)
    assert.is(limited.headers.get('retry-after'), '50', route)
    // The envelope is the REST doors' (tRPC answers its own error shape).
    if (route.startsWith('/api')) assert.is(limited.body.status, 'error')
    assert.is((await server.request(method, route, { token: valid.token })).status, 429, 'even a valid token is refused: guessing gains nothing')
    clock.advance(50_000)
    assert.is((await server.request(method, route, { token: valid.token })).status, 200, route)
    await server.close()
  }
})

test('failed logins count too: a token from an address that guessed passwords is refused', async () => {
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, rateLimits: { ...DEFAULT_RATE_LIMITS, auth: { max: 5, windowMs: 60_000 } } })
  const user = await registerUser(server)
  for (let i = 0; i < 3; i++) {
    const res = await server.request('POST', '/api/mobile/auth/login', { body: { email: `${user.username}@example.com`, password: `wrong${i}xxx` } })
    assert.is(res.status, 401)
  }
  for (let i = 0; i < 2; i++) assert.is((await server.request('GET', '/api/mobile/user/profile', { token: `guess${i}` })).status, 401)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 429)
  await server.close()
})

test('successful logins and valid tokens do not lock an address out', async () => {
  const server = await startTestServer({ rateLimits: DEFAULT_RATE_LIMITS })
  const user = await registerUser(server)
  for (let i = 0; i < 4; i++) {
    const res = await server.request('POST', '/api/mobile/auth/login', { body: { email: `${user.username}@example.com`, password: 'correct horse' } })
    assert.is(res.status, 200)
  }
  for (let i = 0; i < 10; i++) assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 200)
  await server.close()
})

test.run()
