import { createHash } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DECOY_HASH, decoyHash, HASH_PREFIX, verifyPassword } from '../../src/server/auth/passwords.js'
import { ConfigError, loadConfig } from '../../src/server/config.js'
import { sessions, users } from '../../src/server/db/schema.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'

const clock = manualClock(new Date('2026-03-01T12:00:00Z'))
const auth = suite<{ server: TestServer }>('auth')

auth.before(async (ctx) => {
  ctx.server = await startTestServer({ clock: clock.clock })
})
auth.after(async (ctx) => ctx.server.close())

const register = (server: TestServer, body: Record<string, unknown>) => server.request('POST', '/api/mobile/auth/register', { body })
const login = (server: TestServer, body: Record<string, unknown>) => server.request('POST', '/api/mobile/auth/login', { body })

auth('register answers 201 with a Session and logs in at once', async ({ server }) => {
  const res = await register(server, { username: 'Alice_1', email: 'Alice@Example.com', password: 'correct horse', full_name: 'Alice A' })
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  assert.type(res.body.message, 'string')
  assert.is(res.body.timestamp, Math.floor(clock.clock().getTime() / 1000))
  const session = res.body.data
  assert.match(session.token, /^plz_[A-Za-z0-9_-]{43}$/)
  assert.is(session.expires_at, '2026-03-31 12:00:00')
  const noAvatar = { avatar_width: null, avatar_height: null, avatar_blurhash: null }
  assert.equal(session.user, { id: session.user.id, username: 'Alice_1', email: 'Alice@Example.com', email_verified: false, full_name: 'Alice A', avatar: '', ...noAvatar })

  const profile = await server.request('GET', '/api/mobile/user/profile', { token: session.token })
  assert.is(profile.status, 200)
  assert.equal(profile.body.data, {
    id: session.user.id,
    username: 'Alice_1',
    full_name: 'Alice A',
    bio: '',
    avatar: '',
    ...noAvatar,
    avatar_alt: '',
    is_verified: false,
    followers_count: 0,
    following_count: 0,
    posts_count: 0,
    active_stories_count: 0,
    is_following: false,
    is_private: false,
    follow_requested: false,
  })
})

auth('passwords and tokens are stored only as hashes', async ({ server }) => {
  const res = await register(server, { username: 'hashcheck', email: 'hash@example.com', password: 'super secret pw' })
  const [row] = await server.services.db.select().from(users).where(eq(users.username, 'hashcheck'))
  assert.match(row.passwordHash, /^scrypt\$\d+\$\d+\$\d+\$/)
  assert.not.ok(row.passwordHash.includes('super secret pw'))
  const stored = await server.services.db.select().from(sessions).where(eq(sessions.userId, row.id))
  assert.is(stored.length, 1)
  assert.is(stored[0].tokenHash, createHash('sha256').update(res.body.data.token).digest('hex'))
  assert.not.ok(await verifyPassword('super secret pw', DECOY_HASH))
})

const badRegistrations: Array<[string, Record<string, unknown>, RegExp]> = [
  ['username too short', { username: 'ab', email: 'x1@example.com', password: 'password1' }, /username/],
  ['username too long', { username: 'a'.repeat(31), email: 'x2@example.com', password: 'password1' }, /username/],
  ['username with a space', { username: 'bad name', email: 'x3@example.com', password: 'password1' }, /username/],
  ['username with a dash', { username: 'bad-name', email: 'x4@example.com', password: 'password1' }, /username/],
  ['missing username', { email: 'x5@example.com', password: 'password1' }, /username/],
  ['invalid email', { username: 'goodname1', email: 'not-an-email', password: 'password1' }, /email/],
  ['missing email', { username: 'goodname2', password: 'password1' }, /email/],
  ['short password', { username: 'goodname3', email: 'x6@example.com', password: 'short' }, /password/],
  ['missing password', { username: 'goodname4', email: 'x7@example.com' }, /password/],
  ['full name too long', { username: 'goodname5', email: 'x8@example.com', password: 'password1', full_name: 'x'.repeat(101) }, /full_name/],
  ['username of the wrong type', { username: 12345, email: 'x9@example.com', password: 'password1' }, /username/],
]

for (const [name, body, message] of badRegistrations) {
  auth(`register refuses ${name} with 400 and creates nothing`, async ({ server }) => {
    const before = await server.services.db.$count(users)
    const res = await register(server, body)
    assert.is(res.status, 400)
    assert.is(res.body.status, 'error')
    assert.is(res.body.data, null)
    assert.match(res.body.message, message)
    assert.is(await server.services.db.$count(users), before)
  })
}

auth('usernames and emails are unique without regard to case (409)', async ({ server }) => {
  await registerUser(server, 'Unique.One')
  const sameName = await register(server, { username: 'UNIQUE.one', email: 'other@example.com', password: 'password1' })
  assert.is(sameName.status, 409)
  assert.match(sameName.body.message, /username/)
  const sameEmail = await register(server, { username: 'someone_else', email: 'unique.ONE@EXAMPLE.com', password: 'password1' })
  assert.is(sameEmail.status, 409)
  assert.match(sameEmail.body.message, /email/)
})

auth('login takes the email in any case (or the username) and returns a new Session', async ({ server }) => {
  await register(server, { username: 'loginuser', email: 'Login@Example.com', password: 'password one' })
  const res = await login(server, { email: 'login@example.COM', password: 'password one' })
  assert.is(res.status, 200)
  assert.is(res.body.data.user.username, 'loginuser')
  assert.is(res.body.data.expires_at, '2026-03-31 12:00:00')
  const byName = await login(server, { email: 'LoginUser', password: 'password one' })
  assert.is(byName.status, 200)
  assert.is.not(byName.body.data.token, res.body.data.token)
})

auth('login with a wrong password or an unknown email is 401, with the same message', async ({ server }) => {
  await register(server, { username: 'wrongpw', email: 'wrongpw@example.com', password: 'password one' })
  const wrong = await login(server, { email: 'wrongpw@example.com', password: 'password two' })
  const unknown = await login(server, { email: 'nobody@example.com', password: 'password one' })
  assert.is(wrong.status, 401)
  assert.is(unknown.status, 401)
  assert.is(wrong.body.message, unknown.body.message)
  assert.is(wrong.body.data, null)
})

auth('login without its fields is 400', async ({ server }) => {
  assert.is((await login(server, {})).status, 400)
  assert.is((await login(server, { email: 'a@b.co' })).status, 400)
  assert.is((await login(server, { password: 'password1' })).status, 400)
})

auth('authenticated operations need a valid bearer token (401)', async ({ server }) => {
  const none = await server.request('GET', '/api/mobile/user/profile')
  assert.is(none.status, 401)
  assert.is(none.body.status, 'error')
  const bad = await server.request('GET', '/api/mobile/user/profile', { token: 'plz_not-a-real-token' })
  assert.is(bad.status, 401)
  const malformed = await server.request('GET', '/api/mobile/user/profile', { headers: { authorization: 'Basic abc' } })
  assert.is(malformed.status, 401)
  assert.is((await server.request('POST', '/api/mobile/auth/logout')).status, 401)
  assert.is((await server.request('POST', '/api/mobile/auth/refresh')).status, 401)
})

auth('refresh returns a new Session and the old token stops working', async ({ server }) => {
  const user = await registerUser(server)
  const res = await server.request('POST', '/api/mobile/auth/refresh', { token: user.token })
  assert.is(res.status, 200)
  const fresh = res.body.data.token
  assert.is.not(fresh, user.token)
  assert.is(res.body.data.user.id, user.id)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 401)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: fresh })).status, 200)
  assert.is((await server.request('POST', '/api/mobile/auth/refresh', { token: user.token })).status, 401)
})

auth('logout answers null and the token stops working at once', async ({ server }) => {
  const user = await registerUser(server)
  const other = await login(server, { email: `${user.username}@example.com`, password: 'correct horse' })
  const res = await server.request('POST', '/api/mobile/auth/logout', { token: user.token })
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  assert.is(res.body.data, null)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 401)
  assert.is((await server.request('POST', '/api/mobile/auth/logout', { token: user.token })).status, 401)
  // Other sessions of the same user live on.
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: other.body.data.token })).status, 200)
})

auth('tokens expire 30 days after they are issued', async ({ server }) => {
  const user = await registerUser(server)
  clock.advance(30 * 24 * 3600 * 1000 - 1000)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 200)
  clock.advance(1000)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: user.token })).status, 401)
})

auth('another user\'s profile by id or username; a missing one is 404', async ({ server }) => {
  const a = await registerUser(server)
  const b = await registerUser(server)
  const byId = await server.request('GET', `/api/mobile/user/profile/${b.id}`, { token: a.token })
  assert.is(byId.status, 200)
  assert.is(byId.body.data.username, b.username)
  const byName = await server.request('GET', `/api/mobile/user/profile/${b.username.toUpperCase()}`, { token: a.token })
  assert.is(byName.body.data.id, b.id)
  assert.is((await server.request('GET', '/api/mobile/user/profile/999999', { token: a.token })).status, 404)
  assert.is((await server.request('GET', '/api/mobile/user/profile/-3', { token: a.token })).status, 400)
})

auth('the same procedures answer over tRPC', async ({ server }) => {
  const user = await registerUser(server)
  const response = await fetch(`${server.url}/trpc/users.profile`, { headers: { authorization: `Bearer ${user.token}` } })
  assert.is(response.status, 200)
  const body = (await response.json()) as { result: { data: { id: number } } }
  assert.is(body.result.data.id, user.id)
  const denied = await fetch(`${server.url}/trpc/users.profile`)
  assert.is(denied.status, 401)
})

auth.run()

const cost = suite('password cost')

cost('new hashes cost 2^15 (OWASP) unless PLAZA_PASSWORD_COST says otherwise, and the decoy an unknown account is checked against costs the same', async () => {
  for (const [setting, prefix] of [['', HASH_PREFIX], ['11', 'scrypt$2048$8$3$']] as const) {
    const server = await startTestServer({ env: { PLAZA_PASSWORD_COST: setting } })
    try {
      const user = await registerUser(server)
      const [row] = await server.services.db.select().from(users).where(eq(users.id, user.id))
      assert.ok(row.passwordHash.startsWith(prefix), `${setting || 'default'}: ${row.passwordHash}`)
      const decoy = await decoyHash()
      assert.ok(decoy.startsWith(prefix), `${setting || 'default'}: ${decoy}`)
      if (!setting) assert.is(decoy, DECOY_HASH)
      assert.not.ok(await verifyPassword('correct horse', decoy))
      const unknown = await login(server, { email: 'nobody@example.com', password: 'correct horse' })
      assert.is(unknown.status, 401)
      assert.is((await login(server, { email: `${user.username}@example.com`, password: 'correct horse' })).status, 200)
    } finally {
      await server.close()
    }
  }
})

cost('PLAZA_PASSWORD_COST outside 10-20 stops the start-up', () => {
  for (const bad of ['9', '21', '15.5', 'high']) {
    assert.throws(() => loadConfig({}, { PLAZA_PASSWORD_COST: bad }), (error: unknown) => error instanceof ConfigError && /PLAZA_PASSWORD_COST/.test(String(error)), bad)
  }
})

cost.run()
