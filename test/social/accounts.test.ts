/** The account lifecycle: changing the password, listing and revoking sessions, deleting the account. */
import { createECDH } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createSessionTouches } from '../../src/server/auth/sessions.js'
import type { Db } from '../../src/server/db/client.js'
import { totpCodeAt } from '../../src/server/auth/totp.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { filesOnDisk, solidImage, upload } from '../uploads/fixtures.js'
import { counterDrift } from './counters.js'
import { followUser, holdFanout, post, rawClient } from './helpers.js'

const API = '/api/mobile'
const PASSWORD = 'correct horse'

async function login(server: TestServer, user: RegisteredUser, userAgent: string, password = PASSWORD) {
  return server.request('POST', `${API}/auth/login`, { body: { email: user.username, password }, headers: { 'user-agent': userAgent } })
}

test('GET /auth/sessions lists live sessions newest first with their user agents; never a token', async () => {
  const clock = manualClock(new Date('2026-06-01T08:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const user = await registerUser(server)
    clock.advance(1000)
    const phone = (await login(server, user, 'PlazaApp/2.1 (iPhone; iOS 19)')).body.data.token as string
    clock.advance(1000)
    const laptop = (await login(server, user, 'Mozilla/5.0 (Macintosh)')).body.data.token as string
    await server.request('POST', `${API}/auth/logout`, { token: user.token })

    const res = await server.request('GET', `${API}/auth/sessions`, { token: laptop })
    assert.is(res.status, 200, JSON.stringify(res.body))
    const { sessions } = res.body.data
    assert.equal(
      sessions.map((s: any) => [s.user_agent, s.current, s.created_at]),
      [
        ['Mozilla/5.0 (Macintosh)', true, '2026-06-01 08:00:02'],
        ['PlazaApp/2.1 (iPhone; iOS 19)', false, '2026-06-01 08:00:01'],
      ],
      'the logged-out session is not listed',
    )
    assert.equal(Object.keys(sessions[0]).sort(), ['created_at', 'current', 'id', 'last_used_at', 'user_agent'])
    assert.not.ok(JSON.stringify(res.body).includes(phone.slice(4, 20)) || /token|hash/i.test(JSON.stringify(res.body)))
    assert.is((await server.request('GET', `${API}/auth/sessions`)).status, 401)

    // Expired sessions are gone from the list.
    clock.advance(31 * 24 * 3600_000)
    const fresh = (await login(server, user, 'later')).body.data.token as string
    const later = await server.request('GET', `${API}/auth/sessions`, { token: fresh })
    assert.equal(later.body.data.sessions.map((s: any) => s.user_agent), ['later'])
  } finally {
    await server.close()
  }
})

test('last_used_at follows use at most once a minute', async () => {
  const clock = manualClock(new Date('2026-06-01T08:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const user = await registerUser(server)
    const stored = async () => {
      const result = await rawClient(server).execute({ sql: 'select last_used_at from sessions where user_id = ?', args: [user.id] })
      return Number(result.rows[0].last_used_at)
    }
    const start = clock.clock().getTime()
    assert.is(await stored(), start, 'set when the session opens')
    const use = async () => {
      await server.request('GET', `${API}/notifications/count`, { token: user.token })
      // Written in batches (every 10 s while serving): write this one now.
      await server.services.sessionTouches.flush()
    }
    clock.advance(30_000)
    await use()
    assert.is(await stored(), start, 'not rewritten within the minute')
    clock.advance(31_000)
    await use()
    assert.is(await stored(), start + 61_000)
    const listed = await server.request('GET', `${API}/auth/sessions`, { token: user.token })
    assert.is(listed.body.data.sessions[0].last_used_at, '2026-06-01 08:01:01')
  } finally {
    await server.close()
  }
})

test('a flush writes every noted last use, a chunk of sessions per statement', async () => {
  const server = await startTestServer()
  try {
    const users = []
    for (let i = 0; i < 5; i++) users.push(await registerUser(server))
    const ids = (await rawClient(server).execute({ sql: `select id from sessions where user_id in (${users.map((u) => u.id).join(', ')}) order by id`, args: [] })).rows.map((row) => Number(row.id))
    assert.is(ids.length, 5)
    let statements = 0
    const db = server.services.db
    const counting = {
      run(query: Parameters<Db['run']>[0]) {
        statements++
        return db.run(query)
      },
    } as unknown as Db
    const errors: unknown[] = []
    const touches = createSessionTouches(counting, { background: false, chunk: 2, onError: (error) => errors.push(error) })
    const at = new Date('2030-01-01T00:00:00Z')
    for (const sessionId of ids) touches.note({ sessionId, lastUsedAt: null }, at)
    await touches.flush()
    assert.is(statements, 3, '5 sessions, 2 per statement')
    const stored = await rawClient(server).execute({ sql: `select last_used_at from sessions where id in (${ids.join(', ')})`, args: [] })
    assert.equal(stored.rows.map((row) => Number(row.last_used_at)), ids.map(() => at.getTime()))
    await touches.flush()
    assert.is(statements, 3, 'nothing left to write')
    assert.equal(errors, [])
  } finally {
    await server.close()
  }
})

test('DELETE /auth/sessions/:id revokes one of the caller’s sessions, the current one too; others’ are a 404', async () => {
  const server = await startTestServer()
  try {
    const user = await registerUser(server)
    const other = await registerUser(server)
    const second = (await login(server, user, 'second')).body.data.token as string
    const list = async (token: string) => (await server.request('GET', `${API}/auth/sessions`, { token })).body.data.sessions as any[]
    const [secondSession, firstSession] = await list(user.token)
    const theirs = (await list(other.token))[0]

    assert.is((await server.request('DELETE', `${API}/auth/sessions/${theirs.id}`, { token: user.token })).status, 404)
    assert.is((await server.request('DELETE', `${API}/auth/sessions/999999`, { token: user.token })).status, 404)
    assert.is((await server.request('DELETE', `${API}/auth/sessions/abc`, { token: user.token })).status, 400)
    assert.is((await server.request('DELETE', `${API}/auth/sessions/${secondSession.id}`)).status, 401)
    assert.is((await list(other.token)).length, 1, 'nothing changed')

    const res = await server.request('DELETE', `${API}/auth/sessions/${secondSession.id}`, { token: user.token })
    assert.is(res.status, 200)
    assert.equal([res.body.message, res.body.data], ['Session revoked', null])
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: second })).status, 401)
    assert.is((await server.request('DELETE', `${API}/auth/sessions/${secondSession.id}`, { token: user.token })).status, 404, 'already revoked')

    const self = await server.request('DELETE', `${API}/auth/sessions/${firstSession.id}`, { token: user.token })
    assert.is(self.status, 200)
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: user.token })).status, 401, 'revoking the current session logs out')
  } finally {
    await server.close()
  }
})

test('PUT /user/password: checks the current password (403), keeps the calling session and revokes the others', async () => {
  const server = await startTestServer()
  try {
    const user = await registerUser(server)
    const other = (await login(server, user, 'other device')).body.data.token as string
    const path = `${API}/user/password`
    assert.is((await server.request('PUT', path, { body: { current_password: PASSWORD, new_password: 'new horse battery' } })).status, 401)
    const wrong = await server.request('PUT', path, { token: user.token, body: { current_password: 'not it at all', new_password: 'new horse battery' } })
    assert.is(wrong.status, 403)
    assert.is(wrong.body.message, 'Wrong password')
    for (const body of [{}, { current_password: PASSWORD }, { current_password: PASSWORD, new_password: 'short' }, { current_password: 5, new_password: 'long enough' }]) {
      assert.is((await server.request('PUT', path, { token: user.token, body })).status, 400, JSON.stringify(body))
    }
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: other })).status, 200, 'nothing changed so far')
    assert.is((await login(server, user, 'x')).status, 200)

    const res = await server.request('PUT', path, { token: user.token, body: { current_password: PASSWORD, new_password: 'new horse battery' } })
    assert.is(res.status, 200, JSON.stringify(res.body))
    assert.is(res.body.message, 'Password changed')
    assert.is(res.body.data.revoked_sessions, 2)
    assert.not.ok(JSON.stringify(res.body).includes('scrypt'))
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: other })).status, 401)
    const still = await server.request('GET', `${API}/auth/sessions`, { token: user.token })
    assert.is(still.status, 200)
    assert.is(still.body.data.sessions.length, 1)
    assert.is((await login(server, user, 'x')).status, 401, 'the old password no longer works')
    assert.is((await login(server, user, 'x', 'new horse battery')).status, 200)
  } finally {
    await server.close()
  }
})

/** A user agent's P-256 public key, as a push subscription carries it. */
function pushKey(): string {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  return ecdh.getPublicKey().toString('base64url')
}

/** Every table of the schema, read from sqlite_master (full-text shadow tables and bookkeeping, such as a libsql server's migration lease, aside). */
async function tables(server: TestServer): Promise<string[]> {
  const result = await rawClient(server).execute(
    `select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '%fts%' and name not like '__drizzle%' and name <> 'plaza_migration_lock' order by name`,
  )
  return result.rows.map((row) => String(row.name))
}

async function count(server: TestServer, sqlText: string, args: (string | number)[] = []): Promise<number> {
  const result = await rawClient(server).execute({ sql: sqlText, args })
  return Number(Object.values(result.rows[0])[0])
}

test('DELETE /user/account erases every row and file of the account, corrects every counter, and frees the username', async () => {
  // Push subscriptions are accepted (a loopback endpoint: the test switch) and never sent to (the sender's poll outlasts the test).
  const server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_VAPID_SUBJECT: 'mailto:admin@example.com', PLAZA_DELIVERY_POLL: '60s' } })
  try {
    const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
    const png = () => solidImage(24, 24, 'png')
    const send = async (user: RegisteredUser, route: string) => {
      const res = await upload(server, route, user.token, await png(), 'a.png', 'image/png')
      assert.is(res.status, 201, JSON.stringify(res.body))
      return res.body.data.path as string
    }
    const call = async (user: RegisteredUser, method: string, path: string, body?: unknown) => {
      const res = await server.request(method, API + path, { token: user.token, body })
      assert.ok(res.status < 300, `${method} ${path}: ${JSON.stringify(res.body)}`)
      return res.body.data
    }

    // Alice: an avatar, posts (one with an image, one private, shared and own hashtags), a comment
    // with an image, likes, follows both ways, a story others viewed, views of others' stories,
    // reports, blocks and mutes; Bob and Carol act on her content and she on theirs.
    await send(alice, 'avatar')
    const aliceImage = await send(alice, 'post')
    const alicePost = await post(server, alice.token, { content: 'alice only #aliceonly #shared', image: aliceImage })
    const alicePrivate = await post(server, alice.token, { content: 'hidden #shared', is_public: false })
    const bobImage = await send(bob, 'post')
    const bobPost = await post(server, bob.token, { content: 'bob #shared', image: bobImage })
    const carolPost = await post(server, carol.token, { content: 'carol' })
    await followUser(server, alice.token, bob.id)
    await followUser(server, bob.token, alice.id)
    await followUser(server, carol.token, alice.id)
    await followUser(server, carol.token, bob.id)
    await call(alice, 'POST', `/interactions/like/${bobPost.id}`)
    await call(alice, 'POST', `/interactions/like/${carolPost.id}`)
    await call(bob, 'POST', `/interactions/like/${alicePost.id}`)
    await call(carol, 'POST', `/interactions/like/${bobPost.id}`)
    await call(alice, 'POST', `/interactions/comment/${bobPost.id}`, { content: 'hi bob', image: await send(alice, 'comment') })
    await call(alice, 'POST', `/interactions/comment/${bobPost.id}`, { content: 'again' })
    const carolComment = await call(carol, 'POST', `/interactions/comment/${bobPost.id}`, { content: 'hi from carol' })
    // Replies both ways: carol answers alice's comment on bob's post (it goes with alice's comment),
    // alice answers carol's (carol's replies_count comes back down).
    const aliceComment = (await rawClient(server).execute({ sql: 'select id from comments where user_id = ? and post_id = ? order by id limit 1', args: [alice.id, bobPost.id] })).rows[0].id
    const orphanImage = await send(carol, 'comment')
    const orphan = await call(carol, 'POST', `/interactions/comment/${bobPost.id}`, { content: `@${alice.username} hi`, parent_id: Number(aliceComment), image: orphanImage })
    await call(alice, 'POST', `/interactions/comment/${bobPost.id}`, { content: 'back at you', parent_id: carolComment.id })
    const orphanAt = Number((await rawClient(server).execute({ sql: 'select created_at from comments where id = ?', args: [orphan.id] })).rows[0].created_at)
    const bobCommentImage = await send(bob, 'comment')
    await call(bob, 'POST', `/interactions/comment/${alicePost.id}`, { content: 'hi alice', image: bobCommentImage })
    await call(bob, 'POST', `/interactions/comment/${alicePrivate.id}`, { content: 'private hi' })
    const aliceStory = await call(alice, 'POST', '/stories/create', { content_type: 'image', media_url: await send(alice, 'story') })
    const bobStory = await call(bob, 'POST', '/stories/create', { content_type: 'text', text_content: 'bob story' })
    await call(bob, 'GET', `/stories/view/${aliceStory.id}`)
    await call(alice, 'GET', `/stories/view/${bobStory.id}`)
    await call(carol, 'GET', `/stories/view/${bobStory.id}`)
    // Push subscriptions both ways (a push queued for Bob of Alice's follow, one for Alice of Carol's like), two-factor, and mail.
    const subscription = (name: string) => ({ subscription: { endpoint: `http://127.0.0.1:9/push/${name}`, keys: { p256dh: pushKey(), auth: 'AAAAAAAAAAAAAAAAAAAAAA' } } })
    await call(alice, 'POST', '/push/subscription', subscription('alice'))
    await call(bob, 'POST', '/push/subscription', subscription('bob'))
    await call(alice, 'DELETE', `/user/unfollow/${bob.id}`)
    await call(alice, 'POST', `/user/follow/${bob.id}`)
    await call(carol, 'POST', `/interactions/like/${alicePost.id}`)
    const { secret } = await call(alice, 'POST', '/auth/2fa/setup', { password: PASSWORD })
    await call(alice, 'POST', '/auth/2fa/confirm', { code: totpCodeAt(secret, new Date()) })
    const raw = rawClient(server)
    await raw.execute({ sql: 'insert into blocks (blocker_id, blocked_id, created_at) values (?, ?, 0), (?, ?, 0), (?, ?, 0)', args: [alice.id, carol.id, bob.id, alice.id, bob.id, carol.id] })
    await raw.execute({ sql: 'insert into mutes (muter_id, muted_id, created_at) values (?, ?, 0), (?, ?, 0), (?, ?, 0)', args: [alice.id, bob.id, carol.id, alice.id, carol.id, bob.id] })
    await raw.execute({ sql: 'insert into follow_requests (requester_id, target_id, created_at) values (?, ?, 0), (?, ?, 0), (?, ?, 0)', args: [carol.id, alice.id, alice.id, bob.id, bob.id, carol.id] })
    await raw.execute({ sql: 'insert into bookmarks (post_id, user_id, created_at) values (?, ?, 0), (?, ?, 0), (?, ?, 0)', args: [bobPost.id, alice.id, alicePost.id, bob.id, bobPost.id, carol.id] })
    await raw.execute({
      sql: `insert into reports (reporter_id, target_type, target_id, target_user_id, reason, created_at) values
        (?, 'post', ?, ?, 'spam', 0), (?, 'post', ?, ?, 'spam', 0), (?, 'user', ?, ?, 'spam', 0)`,
      args: [alice.id, bobPost.id, bob.id, bob.id, alicePost.id, alice.id, carol.id, bob.id, bob.id],
    })
    await raw.execute({ sql: `insert into account_tokens (user_id, purpose, token_hash, email, created_at, expires_at) values (?, 'password_reset', 't1', 'a@example.com', 0, 1), (?, 'verify_email', 't2', 'b@example.com', 0, 1)`, args: [alice.id, bob.id] })
    await raw.execute({ sql: `insert into login_challenges (user_id, token_hash, created_at, expires_at) values (?, 'c1', 0, 1), (?, 'c2', 0, 1)`, args: [alice.id, bob.id] })
    await raw.execute({ sql: `insert into mail_outbox (user_id, kind, recipient, subject, expires_at, created_at) values (?, 'password_reset', 'a@example.com', 's', 0, 0), (?, 'verify_email', 'b@example.com', 's', 0, 0)`, args: [alice.id, bob.id] })
    await server.services.fanout.drain()
    assert.equal(await counterDrift(server), [], 'exact before')
    // Backfills still pending both ways, and one of others: the runner is held (a pending post of
    // someone else makes its slices fail), so these stand for follows it has not reached yet.
    const dave = await registerUser(server)
    await holdFanout(server)
    await call(dave, 'POST', '/posts/create', { content: 'keeps the runner waiting' })
    await raw.execute({ sql: 'insert into timeline_backfills (follower_id, followee_id) values (?, ?), (?, ?), (?, ?)', args: [alice.id, bob.id, carol.id, alice.id, carol.id, bob.id] })

    // What goes with Alice, table by table: rows naming her or her posts and stories.
    const mine = {
      posts: (await raw.execute({ sql: 'select id from posts where user_id = ?', args: [alice.id] })).rows.map((r) => Number(r.id)),
      stories: (await raw.execute({ sql: 'select id from stories where user_id = ?', args: [alice.id] })).rows.map((r) => Number(r.id)),
    }
    const A = alice.id
    const P = `(${mine.posts.join(',')})`
    const S = `(${mine.stories.join(',')})`
    const hers: Record<string, string> = {
      users: `id = ${A}`,
      sessions: `user_id = ${A}`,
      follows: `follower_id = ${A} or following_id = ${A}`,
      posts: `user_id = ${A}`,
      likes: `user_id = ${A} or post_id in ${P}`,
      comments: `user_id = ${A} or post_id in ${P} or id = ${orphan.id}`,
      hashtags: `id not in (select hashtag_id from post_hashtags where post_id not in ${P})`,
      post_hashtags: `post_id in ${P}`,
      stories: `user_id = ${A}`,
      story_views: `viewer_id = ${A} or story_id in ${S}`,
      notifications: `user_id = ${A} or actor_id = ${A} or post_id in ${P} or story_id in ${S} or (actor_id = ${carol.id} and created_at = ${orphanAt})`,
      // Bob's comment on her post goes with the post, and so does its image, which nothing else uses.
      uploads: `user_id = ${A} or path = '${bobCommentImage}' or path = '${orphanImage}'`,
      rate_limits: `key like '%:user:${A}'`,
      timelines: `user_id = ${A} or post_id in ${P}`,
      timeline_floors: `user_id = ${A}`,
      timeline_pulled_authors: `user_id = ${A}`,
      timeline_backfills: `follower_id = ${A} or followee_id = ${A}`,
      blocks: `blocker_id = ${A} or blocked_id = ${A}`,
      mutes: `muter_id = ${A} or muted_id = ${A}`,
      follow_requests: `requester_id = ${A} or target_id = ${A}`,
      bookmarks: `user_id = ${A} or post_id in ${P}`,
      reports: `reporter_id = ${A} or target_user_id = ${A} or (target_type = 'post' and target_id in ${P})`,
      // Neither holds anything of a user: the fan-out's cursor, and the operator's record (kept by design).
      push_subscriptions: `user_id = ${A}`,
      // Pushes queued for her subscriptions, and for others' of what she did (their notifications go).
      push_deliveries: `subscription_id in (select id from push_subscriptions where user_id = ${A}) or notification_id in (select id from notifications where user_id = ${A} or actor_id = ${A} or post_id in ${P} or story_id in ${S})`,
      mail_outbox: `user_id = ${A}`,
      account_tokens: `user_id = ${A}`,
      totp_credentials: `user_id = ${A}`,
      recovery_codes: `user_id = ${A}`,
      login_challenges: `user_id = ${A}`,
      // The server's VAPID keys.
      instance_keys: '0',
      timeline_fanout: '0',
      // One number (the session cache's generation), moved by the deletion but holding nothing of hers.
      auth_epoch: '0',
      moderation_actions: '0',
      // Calls per catalog operation, counted for no one in particular.
      operation_stats: '0',
      // The chat gateway's keys and their usage are the operator's, not any user's.
      gateway_keys: '0',
      gateway_usage: '0',
      // Stored /v1/responses answers belong to the gateway key that made them (or to no one).
      gateway_responses: '0',
      gateway_key_minutes: '0',
      // /api/chat conversations belong to a gateway key (or to whoever holds the id), never to an account; they expire after 24 h idle.
      chat_conversations: '0',
      chat_messages: '0',
    }
    assert.equal(await tables(server), Object.keys(hers).sort(), 'every table of the schema is accounted for')
    const before: Record<string, { total: number; hers: number }> = {}
    for (const table of Object.keys(hers)) {
      before[table] = { total: await count(server, `select count(*) from ${table}`), hers: await count(server, `select count(*) from ${table} where ${hers[table]}`) }
    }
    for (const table of ['users', 'sessions', 'follows', 'posts', 'likes', 'comments', 'post_hashtags', 'stories', 'story_views', 'notifications', 'uploads', 'timelines', 'timeline_backfills', 'blocks', 'mutes', 'reports', 'push_subscriptions', 'push_deliveries', 'mail_outbox', 'account_tokens', 'totp_credentials', 'recovery_codes', 'login_challenges']) {
      assert.ok(before[table].hers > 0, `the scenario gives Alice rows in ${table}`)
    }
    const filesBefore = filesOnDisk(server.dataDir)
    const aliceFiles = (await raw.execute({ sql: 'select path from uploads where user_id = ?', args: [A] })).rows.map((r) => String(r.path))
    assert.is(aliceFiles.length, 4)
    const goneFiles = [...aliceFiles, bobCommentImage, orphanImage]
    assert.ok(goneFiles.every((file) => filesBefore.includes(file)))

    const path = `${API}/user/account`
    assert.is((await server.request('DELETE', path, { body: { password: PASSWORD } })).status, 401)
    const wrong = await server.request('DELETE', path, { token: alice.token, body: { password: 'not my password' } })
    assert.is(wrong.status, 403)
    assert.is(wrong.body.message, 'Wrong password')
    assert.is((await server.request('DELETE', path, { token: alice.token, body: {} })).status, 400)
    assert.is((await server.request('DELETE', path, { token: alice.token, raw: '{not json', headers: { 'content-type': 'application/json' } })).status, 400)
    assert.is(await count(server, 'select count(*) from posts where user_id = ?', [A]), 2, 'nothing changed')

    const res = await server.request('DELETE', path, { token: alice.token, body: { password: PASSWORD } })
    assert.is(res.status, 200, JSON.stringify(res.body))
    assert.equal([res.body.message, res.body.data], ['Account deleted', null])

    for (const table of Object.keys(hers)) {
      assert.is(await count(server, `select count(*) from ${table} where ${hers[table]}`), 0, `nothing of Alice's is left in ${table}`)
      assert.is(await count(server, `select count(*) from ${table}`), before[table].total - before[table].hers, `only Alice's rows left ${table}`)
    }
    assert.is(await count(server, `select count(*) from posts_fts where posts_fts match 'aliceonly'`), 0)
    assert.is(await count(server, `select count(*) from users_fts where users_fts match ?`, [`"${alice.username}"`]), 0)
    assert.equal(await counterDrift(server), [], 'every counter exact after')
    // As Bob sees them: the blocks seeded above hide Bob from Carol.
    const bobProfile = await server.request('GET', `${API}/user/profile/${bob.id}`, { token: bob.token })
    assert.equal([bobProfile.body.data.followers_count, bobProfile.body.data.following_count], [1, 0])
    const bobDetail = await server.request('GET', `${API}/posts/detail/${bobPost.id}`, { token: bob.token })
    assert.equal([bobDetail.body.data.post.likes_count, bobDetail.body.data.post.comments_count], [1, 1])
    assert.is(await count(server, `select posts_count from hashtags where tag = 'shared'`), 1)

    assert.equal(filesOnDisk(server.dataDir), filesBefore.filter((file) => !goneFiles.includes(file)))
    assert.ok(filesOnDisk(server.dataDir).includes(bobImage))
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: alice.token })).status, 401)

    const again = await server.request('POST', `${API}/auth/register`, {
      body: { username: alice.username, email: `${alice.username}@example.com`, password: 'another password' },
    })
    assert.is(again.status, 201, 'the username and email are free again')
    assert.ok(again.body.data.user.id > A, 'ids are never reused')
  } finally {
    await server.close()
  }
})

test.run()
