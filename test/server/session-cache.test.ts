/**
 * The session cache (auth/sessions.ts `SessionCache`): a token is read from `sessions` once, and
 * after that trusted while `auth_epoch` stands still. Two servers on one database stand for two
 * `plaza serve` processes: whatever one of them changes (a logout, a refresh, a password change, a
 * revoked session, a suspension, a deleted account, a renamed user) is seen by the other's next
 * request, however recently it cached the token.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { SessionCache, SUSPENDED_MESSAGE } from '../../src/server/auth/sessions.js'
import { suspendUser, unsuspendUser } from '../../src/server/domain/moderation.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'

const API = '/api/mobile'
const BY = { moderator: 'test-moderator', note: '' }
const PASSWORD = 'correct horse'

const clock = manualClock(new Date('2026-03-01T12:00:00Z'))
/** `a` serves the requests under test; `b` is the other process, making the changes. */
let a: TestServer
let b: TestServer
test.before(async () => {
  a = await startTestServer({ clock: clock.clock })
  b = await startTestServer({ dataDir: a.dataDir, clock: clock.clock })
})
test.after(async () => {
  await b.close()
  await a.close()
})

const me = (server: TestServer, token: string) => server.request('GET', `${API}/user/profile`, { token })
const login = async (user: RegisteredUser): Promise<string> => {
  const res = await a.request('POST', `${API}/auth/login`, { body: { email: user.username, password: PASSWORD } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  return res.body.data.token
}
/** Resolves `token` on `a` until it is cached there. */
const cached = async (token: string) => {
  assert.is((await me(a, token)).status, 200)
  const misses = a.services.sessions.misses
  assert.is((await me(a, token)).status, 200)
  assert.is(a.services.sessions.misses, misses, 'the second request used the cached session')
}
const generation = async (server: TestServer) => (await server.services.db.values<[number]>(sql`select generation from auth_epoch where id = 1`))[0][0]

test('a token is read from sessions once, then answered from the cache', async () => {
  const user = await registerUser(a)
  const before = a.services.sessions.misses
  for (let i = 0; i < 5; i++) assert.is((await me(a, user.token)).status, 200)
  assert.is(a.services.sessions.misses, before + 1)
  // An unknown token is never cached: each request asks again, and each is refused.
  for (let i = 0; i < 2; i++) assert.is((await me(a, 'plz_nope')).status, 401)
  assert.is(a.services.sessions.misses, before + 3)
})

test("a logout on another process refuses the token at once, and the user's other tokens stay", async () => {
  const user = await registerUser(a)
  const other = await login(user)
  await cached(user.token)
  await cached(other)
  assert.is((await b.request('POST', `${API}/auth/logout`, { token: user.token })).status, 200)
  const res = await me(a, user.token)
  assert.is(res.status, 401)
  assert.is(res.body.message, 'Invalid or expired token')
  assert.is((await me(a, other)).status, 200)
})

test('a refresh on another process retires the old token at once', async () => {
  const user = await registerUser(a)
  await cached(user.token)
  const refreshed = await b.request('POST', `${API}/auth/refresh`, { token: user.token })
  assert.is(refreshed.status, 200)
  assert.is((await me(a, user.token)).status, 401)
  assert.is((await me(a, refreshed.body.data.token)).status, 200)
})

test('a session revoked by id, or by a password change, on another process is refused at once', async () => {
  const user = await registerUser(a)
  const second = await login(user)
  const third = await login(user)
  for (const token of [user.token, second, third]) await cached(token)
  const listed = await b.request('GET', `${API}/auth/sessions`, { token: user.token })
  // Oldest first: the registration's, then `second`'s, then `third`'s.
  const ids = listed.body.data.sessions.map((s: { id: number }) => s.id).sort((x: number, y: number) => x - y)
  assert.is(ids.length, 3)
  assert.is((await b.request('DELETE', `${API}/auth/sessions/${ids[1]}`, { token: user.token })).status, 200)
  assert.is((await me(a, second)).status, 401)
  for (const token of [user.token, third]) assert.is((await me(a, token)).status, 200)

  const changed = await b.request('PUT', `${API}/user/password`, { token: user.token, body: { current_password: PASSWORD, new_password: 'a new password' } })
  assert.is(changed.status, 200, JSON.stringify(changed.body))
  assert.is((await me(a, user.token)).status, 200, 'the session that changed it stays')
  for (const token of [second, third]) assert.is((await me(a, token)).status, 401)
})

test('a password change checks the stored password, not the one the token was resolved with', async () => {
  const user = await registerUser(a)
  await cached(user.token)
  const change = (server: TestServer, current: string, next: string) =>
    server.request('PUT', `${API}/user/password`, { token: user.token, body: { current_password: current, new_password: next } })
  assert.is((await change(b, PASSWORD, 'second password')).status, 200)
  const stale = await change(a, PASSWORD, 'third password')
  assert.is(stale.status, 403)
  assert.is(stale.body.message, 'Wrong password')
  assert.is((await change(a, 'second password', 'third password')).status, 200)
})

test('a suspension on another process refuses the token at once, and lifting it restores it', async () => {
  const user = await registerUser(a)
  await cached(user.token)
  await suspendUser(b.services, user.id, BY, clock.clock())
  const res = await me(a, user.token)
  assert.is(res.status, 403)
  assert.is(res.body.message, SUSPENDED_MESSAGE)
  await unsuspendUser(b.services, user.id, BY, clock.clock())
  assert.is((await me(a, user.token)).status, 200)
})

test("an account deleted on another process takes its tokens with it", async () => {
  const user = await registerUser(a)
  await cached(user.token)
  const deleted = await b.request('DELETE', `${API}/user/account`, { token: user.token, body: { password: PASSWORD } })
  assert.is(deleted.status, 200, JSON.stringify(deleted.body))
  assert.is((await me(a, user.token)).status, 401)
})

test('a name changed on another process is what the next refresh answers', async () => {
  const user = await registerUser(a)
  await cached(user.token)
  assert.is((await b.request('PUT', `${API}/user/update`, { token: user.token, body: { full_name: 'Renamed Elsewhere' } })).status, 200)
  const refreshed = await a.request('POST', `${API}/auth/refresh`, { token: user.token })
  assert.is(refreshed.status, 200)
  assert.is(refreshed.body.data.user.full_name, 'Renamed Elsewhere')
})

test('a cached session still expires on time', async () => {
  const user = await registerUser(a)
  await cached(user.token)
  clock.advance(30 * 24 * 60 * 60 * 1000 + 1)
  try {
    assert.is((await me(a, user.token)).status, 401)
  } finally {
    clock.set(new Date('2026-03-01T12:00:00Z'))
  }
})

test('a full cache lets go of the session it has kept longest', async () => {
  const cache = new SessionCache(a.services.reads, 2)
  const [one, two, three] = [await registerUser(a), await registerUser(a), await registerUser(a)]
  const now = clock.clock()
  for (const user of [one, two, one, two]) assert.is((await cache.resolve(user.token, now))?.user.id, user.id)
  assert.is(cache.misses, 2, 'both kept')
  assert.is((await cache.resolve(three.token, now))?.user.id, three.id)
  assert.is((await cache.resolve(two.token, now))?.user.id, two.id)
  assert.is(cache.misses, 3, 'the second was still kept')
  assert.is((await cache.resolve(one.token, now))?.user.id, one.id)
  assert.is(cache.misses, 4, 'the first had gone to make room for the third')
})

test('the generation moves for what a session lookup answers, and for nothing else', async () => {
  const user = await registerUser(a)
  const db = b.services.db
  const moves = async (change: string) => {
    const before = await generation(b)
    await db.run(sql.raw(change))
    return (await generation(b)) - before
  }
  // Bookkeeping and counters: a session's last use, a follow's counters, the bio (not in a session).
  assert.is(await moves(`update sessions set last_used_at = 1 where user_id = ${user.id}`), 0)
  assert.is(await moves(`update users set followers_count = followers_count, posts_count = posts_count, bio = 'x' where id = ${user.id}`), 0)
  assert.is(await moves(`insert into sessions (user_id, token_hash, created_at, expires_at) values (${user.id}, 'h-${user.id}', 0, 1)`), 0)
  // What a lookup answers.
  for (const column of ['username', 'email', 'full_name', 'avatar']) {
    assert.ok((await moves(`update users set ${column} = ${column} || '' where id = ${user.id}`)) > 0, column)
  }
  assert.ok((await moves(`update users set suspended_at = null where id = ${user.id}`)) > 0)
  assert.ok((await moves(`update sessions set revoked_at = 1 where token_hash = 'h-${user.id}'`)) > 0)
  assert.ok((await moves(`update sessions set expires_at = 2 where token_hash = 'h-${user.id}'`)) > 0)
  assert.ok((await moves(`delete from sessions where token_hash = 'h-${user.id}'`)) > 0)
})

test.run()
