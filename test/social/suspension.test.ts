/**
 * A suspended user can neither log in nor act: every route that takes a token refuses theirs with
 * 403 and one clear message, table-driven over the whole REST route table and every tRPC
 * procedure (so a route added later is covered too). Their sessions survive, and unsuspending
 * restores them.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { SUSPENDED_MESSAGE } from '../../src/server/auth/sessions.js'
import { suspendUser, unsuspendUser } from '../../src/server/domain/moderation.js'
import type { ProcedureRoute } from '../../src/server/rest/adapter.js'
import { mobileRoutes } from '../../src/server/rest/mobile.js'
import { appRouter } from '../../src/server/router.js'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { post, rawClient } from './helpers.js'

const API = '/api/mobile'
const BY = { moderator: 'test-moderator', note: '' }
type Procedures = Record<string, { _def: { type: string; meta?: { auth?: string } } }>
const procedures = (appRouter as unknown as { _def: { procedures: Procedures } })._def.procedures
/**
 * The procedures that never look at a token, as their meta declares (the OpenAPI document's
 * `security: []` comes from the same): they create or open a session (register, login and its second
 * factor, password reset, email verification), or need none (the push key).
 */
const PUBLIC = new Set(Object.keys(procedures).filter((name) => (procedures[name]._def.meta?.auth ?? 'none') === 'none'))

let server: TestServer
let mallory: RegisteredUser
let bob: RegisteredUser
let postId: number
test.before(async () => {
  server = await startTestServer()
  mallory = await registerUser(server)
  bob = await registerUser(server)
  postId = (await post(server, bob.token, { content: 'hello' })).id
  await post(server, mallory.token, { content: 'before the suspension' })
  await suspendUser(server.services, mallory.id, BY, server.services.clock())
})
test.after(async () => {
  await server.close()
})

const login = (username: string, password = 'correct horse') => server.request('POST', `${API}/auth/login`, { body: { email: username, password } })

const fill = (path: string) => path.replace(/\/:(\w+)\??/g, (_, name: string) => `/${name === 'post_id' ? postId : name === 'user_id' ? bob.id : 1}`)

test('every REST route that takes a token refuses a suspended user\'s token with 403 and the message', async () => {
  // A handler route (uploads, the mailed links' pages) takes a token when it declares one.
  const routes = mobileRoutes.filter((route) => ('procedure' in route ? !PUBLIC.has((route as ProcedureRoute).procedure) : (route as { auth?: string }).auth !== undefined))
  assert.ok(routes.some((route) => route.path.startsWith('/upload/')), 'the uploads are covered')
  for (const name of ['auth.register', 'auth.login']) assert.ok(PUBLIC.has(name), `${name} is public`)
  assert.ok(routes.length >= 25, `expected the whole table, got ${routes.length}`)
  for (const route of routes) {
    const res = await server.request(route.method, API + fill(route.path), { token: mallory.token, body: route.method === 'GET' ? undefined : {} })
    assert.is(res.status, 403, `${route.method} ${route.path}: ${res.status} ${JSON.stringify(res.body)}`)
    assert.equal(res.body.status, 'error')
    assert.is(res.body.message, SUSPENDED_MESSAGE, `${route.method} ${route.path}`)
    assert.is(res.body.data, null)
  }
  // The same requests from someone else are not refused.
  assert.is((await server.request('GET', `${API}/posts/feed`, { token: bob.token })).status, 200)
})

test('every tRPC procedure that takes a token refuses it with FORBIDDEN', async () => {
  const names = Object.keys(procedures).filter((name) => !PUBLIC.has(name))
  assert.ok(names.length >= 25)
  for (const name of names) {
    const query = procedures[name]._def.type === 'query'
    const res = await fetch(`${server.url}/trpc/${name}${query ? '' : ''}`, {
      method: query ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${mallory.token}`, ...(query ? {} : { 'content-type': 'application/json' }) },
      body: query ? undefined : '{}',
    })
    const body = await res.json()
    assert.is(res.status, 403, `${name}: ${JSON.stringify(body)}`)
    assert.is(body.error.message, SUSPENDED_MESSAGE)
    assert.is(body.error.data.code, 'FORBIDDEN')
  }
})

test('login is refused with 403 after a correct password only; nothing is created by a refused call', async () => {
  const refused = await login(mallory.username)
  assert.is(refused.status, 403)
  assert.is(refused.body.message, SUSPENDED_MESSAGE)
  assert.is(refused.body.data, null)
  // A wrong password still says only that: the suspension is no hint to a guesser.
  const guess = await login(mallory.username, 'wrong password')
  assert.is(guess.status, 401)
  assert.is(guess.body.message, 'Invalid email or password')

  const count = async (table: string) => Number((await rawClient(server).execute(`select count(*) as n from ${table}`)).rows[0].n)
  const before = { posts: await count('posts'), likes: await count('likes'), sessions: await count('sessions'), reports: await count('reports') }
  await server.request('POST', `${API}/posts/create`, { token: mallory.token, body: { content: 'still here?' } })
  await server.request('POST', `${API}/interactions/like/${postId}`, { token: mallory.token })
  await server.request('POST', `${API}/reports`, { token: mallory.token, body: { target_type: 'post', target_id: postId, reason: 'spam' } })
  assert.equal({ posts: await count('posts'), likes: await count('likes'), sessions: await count('sessions'), reports: await count('reports') }, before)
})

test('unsuspending restores the same session and login; suspending keeps sessions', async () => {
  const [live] = (await rawClient(server).execute({ sql: 'select count(*) as n from sessions where user_id = ? and revoked_at is null', args: [mallory.id] })).rows
  assert.is(live.n, 1, 'the suspension revoked nothing')
  await unsuspendUser(server.services, mallory.username, BY, server.services.clock())
  const feed = await server.request('GET', `${API}/posts/feed`, { token: mallory.token })
  assert.is(feed.status, 200)
  assert.is((await login(mallory.username)).status, 200)
  const created = await server.request('POST', `${API}/posts/create`, { token: mallory.token, body: { content: 'back' } })
  assert.is(created.status, 201)
})

test('the suspension takes effect at once for a token already in use', async () => {
  const eve = await registerUser(server)
  assert.is((await server.request('GET', `${API}/notifications/count`, { token: eve.token })).status, 200)
  await suspendUser(server.services, eve.username, BY, server.services.clock())
  assert.is((await server.request('GET', `${API}/notifications/count`, { token: eve.token })).status, 403)
})

test.run()
