/**
 * Web Push (issue 48): the subscription endpoints, and delivery from the durable outbox to a push
 * service. No real push service can run here, so test/helpers/push-service.ts stands in on
 * loopback: it decrypts every message with the subscription's private key (RFC 8291), verifies the
 * VAPID token (RFC 8292) and reads TTL and Urgency, as Mozilla's, Google's or Apple's would.
 * Loopback endpoints are accepted only with the test switch PLAZA_FETCH_ALLOW_PRIVATE=1.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { suspendUser } from '../../src/server/domain/moderation.js'
import { notificationType } from '../../src/shared/schemas/responses.js'
import { startServe } from '../helpers/cli.js'
import { startPushService, type PushService } from '../helpers/push-service.js'
import { databaseEnvFor, manualClock, registerUser, startTestServer, tempDir, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, post } from './helpers.js'

const API = '/api/mobile'
const SUBJECT = 'mailto:push-admin@example.com'
const ENV = { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_VAPID_SUBJECT: SUBJECT, PLAZA_PUSH_TTL: '3600', PLAZA_DELIVERY_POLL: '20ms' }

let service: PushService
test.before(async () => {
  service = await startPushService()
})
test.after(async () => {
  await service.close()
})

async function subscribe(server: TestServer, user: { token: string }, body: Record<string, unknown> = {}) {
  const res = await server.request('POST', `${API}/push/subscription`, { token: user.token, body: { subscription: service.subscription(), ...body } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  return res.body.data
}

const count = async (server: TestServer, table: string) => (await server.services.db.values<[number]>(sql.raw(`select count(*) from ${table}`)))[0][0]

test('GET /push/vapid-key answers the key made at the first start; a restart keeps it', async () => {
  const dataDir = tempDir()
  const server = await startTestServer({ env: ENV, dataDir })
  let key: string
  try {
    const res = await server.request('GET', `${API}/push/vapid-key`)
    assert.is(res.status, 200)
    key = res.body.data.public_key
    assert.is(Buffer.from(key, 'base64url').length, 65)
    assert.is(Buffer.from(key, 'base64url')[0], 4, 'an uncompressed P-256 point')
  } finally {
    await server.close()
  }
  const again = await startTestServer({ env: ENV, dataDir })
  try {
    assert.is((await again.request('GET', `${API}/push/vapid-key`)).body.data.public_key, key)
  } finally {
    await again.close()
  }
})

test('subscription: POST answers it with every notification type, GET shows it, PUT changes alerts and policy, DELETE removes it', async () => {
  const server = await startTestServer({ env: ENV })
  try {
    const alice = await registerUser(server)
    assert.is((await server.request('GET', `${API}/push/subscription`, { token: alice.token })).status, 404)
    const created = await subscribe(server, alice, { data: { alerts: { like: false }, policy: 'followed' } })
    const types = notificationType.options
    assert.equal(Object.keys(created.alerts).sort(), [...types].sort())
    assert.is(created.alerts.like, false)
    assert.ok(types.filter((t) => t !== 'like').every((t) => created.alerts[t] === true), 'types not named are on')
    assert.is(created.policy, 'followed')
    assert.is(created.server_key, (await server.request('GET', `${API}/push/vapid-key`)).body.data.public_key)
    assert.equal((await server.request('GET', `${API}/push/subscription`, { token: alice.token })).body.data, created)

    const updated = await server.request('PUT', `${API}/push/subscription`, { token: alice.token, body: { data: { alerts: { follow: false } } } })
    assert.is(updated.status, 200, JSON.stringify(updated.body))
    assert.is(updated.body.data.alerts.like, false, 'alerts not given stay as they were')
    assert.is(updated.body.data.alerts.follow, false)
    assert.is(updated.body.data.policy, 'followed')

    // A second POST replaces the session's subscription: one per session.
    const replaced = await subscribe(server, alice)
    assert.is.not(replaced.id, created.id)
    assert.is(replaced.alerts.like, true)
    assert.is(await count(server, 'push_subscriptions'), 1)

    // Another session of the same account has its own.
    const login = await server.request('POST', `${API}/auth/login`, { body: { email: alice.username, password: 'correct horse' } })
    const phone = { token: login.body.data.token as string }
    assert.is((await server.request('GET', `${API}/push/subscription`, { token: phone.token })).status, 404)
    await subscribe(server, phone)
    assert.is(await count(server, 'push_subscriptions'), 2)

    const removed = await server.request('DELETE', `${API}/push/subscription`, { token: alice.token })
    assert.equal([removed.status, removed.body.data, removed.body.message], [200, null, 'Unsubscribed'])
    assert.is((await server.request('GET', `${API}/push/subscription`, { token: alice.token })).status, 404)
    assert.is((await server.request('DELETE', `${API}/push/subscription`, { token: alice.token })).status, 200, 'none left is not an error')
    assert.is((await server.request('PUT', `${API}/push/subscription`, { token: alice.token, body: { data: { policy: 'all' } } })).status, 404)

    // Logging out takes the session's subscription with it.
    assert.is((await server.request('POST', `${API}/auth/logout`, { token: phone.token })).status, 200)
    assert.is(await count(server, 'push_subscriptions'), 0)

    // A refresh moves it to the new session; a password change from another session revokes it with its session.
    const kept = await subscribe(server, alice)
    const refreshed = await server.request('POST', `${API}/auth/refresh`, { token: alice.token })
    const fresh = refreshed.body.data.token as string
    assert.equal((await server.request('GET', `${API}/push/subscription`, { token: fresh })).body.data, kept)
    const tablet = (await server.request('POST', `${API}/auth/login`, { body: { email: alice.username, password: 'correct horse' } })).body.data.token as string
    assert.is((await server.request('PUT', `${API}/user/password`, { token: tablet, body: { current_password: 'correct horse', new_password: 'another horse' } })).status, 200)
    assert.is(await count(server, 'push_subscriptions'), 0)
  } finally {
    await server.close()
  }
})

test('bad subscriptions are 400s that store nothing; without a token 401; without a VAPID contact 503', async () => {
  const server = await startTestServer({ env: ENV })
  const strict = await startTestServer({ env: { PLAZA_VAPID_SUBJECT: SUBJECT } })
  const bare = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
  try {
    const alice = await registerUser(server)
    const good = service.subscription()
    const cases: Array<[unknown, RegExp]> = [
      [{}, /subscription is required/],
      [{ subscription: { endpoint: good.endpoint } }, /subscription\.keys is required/],
      [{ subscription: { ...good, endpoint: 'ftp://example.com/x' } }, /only http and https/],
      [{ subscription: { ...good, endpoint: 'not a url' } }, /not a valid URL/],
      [{ subscription: { ...good, keys: { ...good.keys, p256dh: 'abc' } } }, /p256dh must be/],
      [{ subscription: { ...good, keys: { ...good.keys, auth: Buffer.alloc(15).toString('base64url') } } }, /auth must be/],
      // 65 bytes starting 0x04 that are not a point on the curve.
      [{ subscription: { ...good, keys: { ...good.keys, p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url') } } }, /not a P-256 public key/],
      [{ subscription: good, data: { alerts: { likes: true } } }, /"likes" is not a notification type/],
      [{ subscription: good, data: { alerts: { like: 'yes' } } }, /true or false/],
      [{ subscription: good, data: { policy: 'friends' } }, /data\.policy must be one of all, followed, follower, none/],
    ]
    for (const [body, message] of cases) {
      const res = await server.request('POST', `${API}/push/subscription`, { token: alice.token, body })
      assert.is(res.status, 400, JSON.stringify(body))
      assert.match(res.body.message, message)
    }
    assert.is((await server.request('POST', `${API}/push/subscription`, { body: { subscription: good } })).status, 401)
    assert.is(await count(server, 'push_subscriptions'), 0)

    // Without the test switch: https only, and never a loopback or private address.
    const bob = await registerUser(strict)
    const http = await strict.request('POST', `${API}/push/subscription`, { token: bob.token, body: { subscription: good } })
    assert.is(http.status, 400)
    assert.match(http.body.message, /over https/)
    const loopback = await strict.request('POST', `${API}/push/subscription`, { token: bob.token, body: { subscription: { ...good, endpoint: 'https://127.0.0.1/push/x' } } })
    assert.is(loopback.status, 400)
    assert.match(loopback.body.message, /private or loopback/)

    const carol = await registerUser(bare)
    const unavailable = await bare.request('POST', `${API}/push/subscription`, { token: carol.token, body: { subscription: good } })
    assert.is(unavailable.status, 503)
    assert.match(unavailable.body.message, /PLAZA_VAPID_SUBJECT/)
  } finally {
    await bare.close()
    await strict.close()
    await server.close()
  }
})

/**
 * Bob does one of everything to Alice (a like, a comment, a reply to her comment, a mention, a
 * follow, a story view), on `server`; then Alice goes private and Carol asks to follow her.
 */
async function everyType(server: { request: TestServer['request'] }, alice: RegisteredUser, bob: { token: string }, carol: { token: string }) {
  const call = async (method: string, path: string, body?: unknown, token = bob.token) => {
    const res = await server.request(method, API + path, { token, body })
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.data
  }
  const postId = (await call('POST', '/posts/create', { content: 'a post by alice' }, alice.token)).id
  const storyId = (await call('POST', '/stories/create', { content_type: 'text', text_content: 'a story by alice' }, alice.token)).id
  const own = (await call('POST', `/interactions/comment/${postId}`, { content: 'my own words' }, alice.token)).id
  await call('POST', `/interactions/like/${postId}`)
  await call('POST', `/interactions/comment/${postId}`, { content: 'nice' })
  await call('POST', `/interactions/comment/${postId}`, { content: 'agreed', parent_id: own })
  await call('POST', '/posts/create', { content: `hello @${alice.username}` })
  await call('POST', `/user/follow/${alice.id}`)
  await call('GET', `/stories/view/${storyId}`)
  await call('PUT', '/user/update', { is_private: true }, alice.token)
  await call('POST', `/user/follow/${alice.id}`, undefined, carol.token)
  return { postId, storyId }
}

test('every notification type made by another server process reaches the push service once, encrypted to the subscription, with a valid VAPID token, TTL and Urgency', async () => {
  // The server in this process subscribes and sends; `plaza serve --workers 2` in two other processes
  // serves the requests that notify (and sends too: three senders claim from one queue).
  const server = await startTestServer({ env: ENV })
  // With PLAZA_TEST_DATABASE=sqld all of them use one libsql server (a real sqld): several hosts.
  const other = await startServe(['--port', '0', '--workers', '2', '--data-dir', server.dataDir, '--no-rate-limits'], { ...ENV, ...databaseEnvFor(server.dataDir), PLAZA_LOG_LEVEL: 'warn' })
  try {
    const alice = await registerUser(server)
    const bob = await registerUser(server)
    const carol = await registerUser(server)
    const start = service.received.length
    const subscription = await subscribe(server, alice)
    const path = new URL(subscription.endpoint).pathname
    const { postId, storyId } = await everyType({ request: (method, route, options) => requestTo(other.url, method, route, options) }, alice, bob, carol)
    const list = (await server.request('GET', `${API}/notifications/list`, { token: alice.token })).body.data.notifications.reverse()
    assert.equal(list.map((n: { type: string }) => n.type), ['like', 'comment', 'reply', 'mention', 'follow', 'story_view', 'follow_request'])
    assert.equal(new Set(list.map((n: { type: string }) => n.type)), new Set(notificationType.options), 'every type the list knows')

    const got = (await service.waitFor(start + list.length)).slice(start)
    assert.equal(service.problems, [])
    const byId = new Map(got.map((push) => [push.payload.notification_id, push]))
    assert.is(byId.size, list.length, 'each notification pushed once')
    const key = (await server.request('GET', `${API}/push/vapid-key`)).body.data.public_key
    for (const notification of list) {
      const push = byId.get(notification.id)!
      assert.is(push.path, path)
      assert.equal(push.payload.notification, notification, 'the list item itself, as the list shows it')
      assert.is(push.payload.notification_type, notification.type)
      const actor = notification.type === 'follow_request' ? carol : bob
      assert.match(push.payload.title, new RegExp(`^Name ${actor.username} `))
      assert.is(push.headers.ttl, '3600')
      assert.is(push.headers.urgency, 'normal')
      assert.is(push.vapidKey, key)
      assert.equal([push.jwt.aud, push.jwt.sub], [service.url, SUBJECT])
      const now = Date.now() / 1000
      assert.ok(push.jwt.exp > now && push.jwt.exp <= now + 24 * 3600, 'expires within a day (RFC 8292 §2)')
    }
    assert.is(byId.get(list[0].id)!.payload.notification.post_id, postId)
    assert.is(byId.get(list[5].id)!.payload.notification.story_id, storyId)
    // The other processes record their sends as they close (a push can arrive before its sender has deleted the row).
    other.child.kill('SIGTERM')
    assert.is(await other.exited, 0)
    await server.services.delivery.drain()
    assert.is(await count(server, 'push_deliveries'), 0, 'the outbox is empty once sent')
  } finally {
    other.child.kill('SIGTERM')
    await other.exited
    await server.close()
  }
})

async function requestTo(url: string, method: string, route: string, { body, token }: { body?: unknown; token?: string } = {}) {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(url + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: response.status, headers: response.headers, body: (await response.json()) as any }
}

test('a notification created while no sender runs is pushed after a restart', async () => {
  const clock = manualClock(new Date())
  // A poll so long that this server never sends before it closes: the rows wait in the database.
  const dataDir = tempDir()
  const first = await startTestServer({ env: { ...ENV, PLAZA_DELIVERY_POLL: '60s' }, clock: clock.clock, dataDir })
  let alice: RegisteredUser
  let bob: RegisteredUser
  const start = service.received.length
  try {
    alice = await registerUser(first)
    bob = await registerUser(first)
    await subscribe(first, alice)
    await followUser(first, bob.token, alice.id)
    assert.is(await count(first, 'push_deliveries'), 1, 'queued in the follow’s transaction')
  } finally {
    await first.close()
  }
  assert.is(service.received.length, start, 'nothing was sent before the restart')
  const second = await startTestServer({ env: ENV, dataDir, clock: clock.clock })
  try {
    const [push] = (await service.waitFor(start + 1)).slice(start)
    assert.equal([push.payload.notification_type, push.payload.notification.actor_id], ['follow', bob.id])
    await second.services.delivery.drain()
    assert.is(await count(second, 'push_deliveries'), 0)
  } finally {
    await second.close()
  }
})

/** A server on a manual clock whose sender runs only when the test drains it (a poll longer than any test). */
async function clockedServer() {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const server = await startTestServer({ env: { ...ENV, PLAZA_DELIVERY_POLL: '60s' }, clock: clock.clock })
  return { server, clock, drain: () => server.services.delivery.drain() }
}

const queued = async (server: TestServer) =>
  server.services.db.all<{ attempts: number; next_attempt_at: number; last_error: string | null }>(sql`select attempts, next_attempt_at, last_error from push_deliveries`)

test('429 is retried no sooner than Retry-After, 503 after a backoff, and 410 removes the subscription', async () => {
  const { server, clock, drain } = await clockedServer()
  try {
    const [alice, bob] = [await registerUser(server), await registerUser(server)]
    await subscribe(server, alice)
    const start = service.received.length
    const sent = () => service.received.slice(start).map((push) => push.status)

    service.script({ status: 429, headers: { 'retry-after': '120' } })
    await followUser(server, bob.token, alice.id)
    await drain()
    assert.equal(sent(), [429])
    const [row] = await queued(server)
    assert.equal([row.attempts, row.last_error], [1, 'HTTP 429'])
    assert.ok(row.next_attempt_at >= clock.clock().getTime() + 120_000, 'not before Retry-After')
    clock.advance(100_000)
    await drain()
    assert.equal(sent(), [429], 'still waiting')
    clock.advance(25_000)
    await drain()
    assert.equal(sent(), [429, 201])
    assert.equal(await queued(server), [])

    service.script({ status: 503 })
    const postId = (await post(server, alice.token, { content: 'hello' })).id
    assert.is((await server.request('POST', `${API}/interactions/like/${postId}`, { token: bob.token })).status, 200)
    await drain()
    assert.equal(sent(), [429, 201, 503])
    const [backoff] = await queued(server)
    assert.ok(backoff.next_attempt_at >= clock.clock().getTime() + 30_000, 'a backoff of at least 30 s')
    clock.advance(40_000)
    await drain()
    assert.equal(sent(), [429, 201, 503, 201])

    service.script({ status: 410 })
    assert.is((await server.request('POST', `${API}/interactions/comment/${postId}`, { token: bob.token, body: { content: 'hi' } })).status, 201)
    await drain()
    assert.equal(sent(), [429, 201, 503, 201, 410])
    assert.is((await server.request('GET', `${API}/push/subscription`, { token: alice.token })).status, 404, 'gone with the 410')
    assert.equal(await queued(server), [])
    assert.equal(service.problems, [])
  } finally {
    await server.close()
  }
})

test('a claim whose sender died comes due when its lease ends, and is sent once', async () => {
  const { server, clock, drain } = await clockedServer()
  try {
    const [alice, bob] = [await registerUser(server), await registerUser(server)]
    await subscribe(server, alice)
    await followUser(server, bob.token, alice.id)
    // What a process that claimed the row and then died leaves behind.
    await server.services.db.run(sql`update push_deliveries set claim = 'dead-process', attempts = 1, next_attempt_at = ${clock.clock().getTime() + 120_000}`)
    const start = service.received.length
    await drain()
    assert.is(service.received.length, start, 'held by the claim')
    clock.advance(121_000)
    await drain()
    assert.is(service.received.length, start + 1)
    assert.is(service.received[start].payload.notification_type, 'follow')
    assert.equal(await queued(server), [])
  } finally {
    await server.close()
  }
})

test('alerts, mutes, blocks, suspensions and the policy decide what is pushed, as of the moment it is sent', async () => {
  const { server, drain } = await clockedServer()
  try {
    const [alice, bob, carol, dave] = [await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server)]
    await subscribe(server, alice, { data: { alerts: { like: false } } })
    const start = service.received.length
    const pushed = () => service.received.slice(start).map((push) => `${push.payload.notification_type}:${push.payload.notification.actor_username}`)
    const act = async (user: RegisteredUser, method: string, path: string, body?: unknown) =>
      assert.ok((await server.request(method, API + path, { token: user.token, body })).status < 300, `${method} ${path}`)
    const postId = (await post(server, alice.token, { content: 'hello' })).id

    await act(bob, 'POST', `/interactions/like/${postId}`)
    assert.equal(await queued(server), [], 'a type switched off is never queued')

    await act(bob, 'POST', `/interactions/comment/${postId}`, { content: 'hi' })
    await act(alice, 'POST', `/user/mute/${bob.id}`)
    await drain()
    assert.equal(pushed(), [], 'muted before it was sent: not pushed')
    assert.equal(await queued(server), [])
    await act(alice, 'DELETE', `/user/unmute/${bob.id}`)

    await act(carol, 'POST', `/user/follow/${alice.id}`)
    await suspendUser(server.services, carol.id, { moderator: 'test', note: '' }, server.services.clock())
    await drain()
    assert.equal(pushed(), [], 'its actor suspended before it was sent: hidden from the list, not pushed')

    await act(dave, 'POST', `/user/follow/${alice.id}`)
    await act(alice, 'POST', `/user/block/${dave.id}`)
    await drain()
    assert.equal(pushed(), [], 'a block deletes the notification, and its delivery with it')

    await act(bob, 'POST', `/interactions/comment/${postId}`, { content: 'again' })
    await drain()
    assert.equal(pushed(), [`comment:${bob.username}`])

    // Only accounts alice follows.
    await server.request('PUT', `${API}/push/subscription`, { token: alice.token, body: { data: { policy: 'followed' } } })
    await act(bob, 'POST', `/interactions/comment/${postId}`, { content: 'not followed' })
    await drain()
    assert.equal(pushed(), [`comment:${bob.username}`])
    await act(alice, 'POST', `/user/follow/${bob.id}`)
    await act(bob, 'POST', `/interactions/comment/${postId}`, { content: 'followed now' })
    await drain()
    assert.equal(pushed(), [`comment:${bob.username}`, `comment:${bob.username}`])

    await server.request('PUT', `${API}/push/subscription`, { token: alice.token, body: { data: { policy: 'none' } } })
    await act(bob, 'POST', `/interactions/comment/${postId}`, { content: 'none' })
    await drain()
    assert.is(pushed().length, 2)
    assert.equal(await queued(server), [])
    assert.equal(service.problems, [])
  } finally {
    await server.close()
  }
})

test('a long post is cut to fit a push; an expired session loses its subscription instead of being pushed to', async () => {
  const { server, clock, drain } = await clockedServer()
  try {
    const [alice, bob] = [await registerUser(server), await registerUser(server)]
    await subscribe(server, alice)
    const start = service.received.length
    const postId = (await post(server, alice.token, { content: '€'.repeat(2200) })).id
    assert.is((await server.request('POST', `${API}/interactions/like/${postId}`, { token: bob.token })).status, 200)
    await drain()
    const [push] = service.received.slice(start)
    assert.is(push.payload.notification.post_id, postId)
    assert.ok(push.payload.notification.post_content.length <= 200, 'cut')
    assert.ok(Buffer.byteLength(JSON.stringify(push.payload)) <= 3000)

    clock.advance(31 * 24 * 3600_000)
    assert.is((await server.request('POST', `${API}/interactions/comment/${postId}`, { token: (await registerUser(server)).token, body: { content: 'x' } })).status, 201)
    await drain()
    assert.is(service.received.length, start + 1, 'not pushed')
    assert.is(await count(server, 'push_subscriptions'), 0, 'the dead session’s subscription is gone')
  } finally {
    await server.close()
  }
})

test("the outboxes' queries are served by their indexes", async () => {
  const server = await startTestServer({ env: { ...ENV, PLAZA_DELIVERY_POLL: '60s' } })
  try {
    const plan = async (statement: string) => (await server.services.db.all<{ detail: string }>(sql.raw(`explain query plan ${statement}`))).map((row) => row.detail).join(' | ')
    const cases: Array<[string, RegExp]> = [
      // A sender's claim: the due end of each outbox.
      ['select id from push_deliveries where next_attempt_at <= 0 order by next_attempt_at limit 32', /SEARCH push_deliveries USING COVERING INDEX push_deliveries_due_idx \(next_attempt_at<\?\)/],
      ['select id from mail_outbox where next_attempt_at is not null and next_attempt_at <= 0 order by next_attempt_at limit 10', /SEARCH mail_outbox USING COVERING INDEX mail_outbox_due_idx/],
      // The read each poll makes first, so that an idle poll never takes the write lock.
      ['select 1 from push_deliveries where next_attempt_at <= 0 limit 1', /SEARCH push_deliveries USING COVERING INDEX push_deliveries_due_idx \(next_attempt_at<\?\)/],
      ['select 1 from mail_outbox where next_attempt_at is not null and next_attempt_at <= 0 limit 1', /SEARCH mail_outbox USING COVERING INDEX mail_outbox_due_idx/],
      // The trigger on every notification: is the recipient subscribed at all, then their subscriptions.
      ['select 1 from push_subscriptions where user_id = 1', /SEARCH push_subscriptions USING COVERING INDEX push_subscriptions_user_idx \(user_id=\?\)/],
      ['select id, alerts from push_subscriptions where user_id = 1', /SEARCH push_subscriptions USING INDEX push_subscriptions_user_idx \(user_id=\?\)/],
      // The calling session's subscription; a deleted notification's or subscription's queued pushes (the foreign keys' cascades).
      ['select id from push_subscriptions where session_id = 1', /SEARCH push_subscriptions USING COVERING INDEX push_subscriptions_session_idx \(session_id=\?\)/],
      ['select id from push_deliveries where notification_id = 1', /SEARCH push_deliveries USING COVERING INDEX push_deliveries_notification_idx/],
      ['select id from push_deliveries where subscription_id = 1', /SEARCH push_deliveries USING COVERING INDEX push_deliveries_subscription_idx/],
      // Tokens and challenges by their hash; recovery codes by user and hash.
      ["select 1 from account_tokens where token_hash = 'x'", /SEARCH account_tokens USING (COVERING )?INDEX account_tokens_hash_idx/],
      ["select 1 from login_challenges where token_hash = 'x'", /SEARCH login_challenges USING (COVERING )?INDEX login_challenges_hash_idx/],
      ["select 1 from recovery_codes where user_id = 1 and code_hash = 'x'", /SEARCH recovery_codes USING COVERING INDEX recovery_codes_user_hash_idx/],
      // plaza admin mail: the primary key backwards, no sort.
      ['select id from mail_outbox order by id desc limit 50', /^SCAN mail_outbox$/],
    ]
    for (const [statement, expected] of cases) assert.match(await plan(statement), expected, statement)
  } finally {
    await server.close()
  }
})

test.run()
