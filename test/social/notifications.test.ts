import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { causedBy, listNotifications, notificationListQuery, notificationsCausedBy, unreadCountQuery } from '../../src/server/domain/notifications.js'
import { sql } from 'drizzle-orm'
import { writeTransaction } from '../../src/server/db/client.js'
import { notifications as notificationsTable } from '../../src/server/db/schema.js'
import { suspendUser } from '../../src/server/domain/moderation.js'
import { INLINE_PAGE_DEPTH } from '../../src/server/domain/page-depth.js'
import { counterDrift } from './counters.js'
import { countingSelects, rawClient } from './helpers.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { API, comment, createPost, follow, like, queryPlan, seedUpload, type User } from './stories-notifications-fixtures.js'

const list = (server: TestServer, user: User, query = '') => server.request('GET', `${API}/notifications/list${query}`, { token: user.token })
const count = async (server: TestServer, user: User) => {
  const res = await server.request('GET', `${API}/notifications/count`, { token: user.token })
  assert.is(res.status, 200)
  return res.body.data.count as number
}
const markRead = (server: TestServer, user: User, id?: number | string) =>
  server.request('PUT', `${API}/notifications/mark_read${id === undefined ? '' : `/${id}`}`, { token: user.token })

const rawMark = async (server: TestServer, userId: number) =>
  (await rawClient(server).execute({ sql: 'select notifications_read_upto as mark from users where id = ?', args: [userId] })).rows[0]?.mark

async function viewStoryOf(server: TestServer, viewer: User, author: User) {
  const created = await server.request('POST', `${API}/stories/create`, { token: author.token, body: { content_type: 'text', text_content: 'hi' } })
  assert.is(created.status, 201)
  assert.is((await server.request('GET', `${API}/stories/view/${created.body.data.id}`, { token: viewer.token })).status, 200)
  return created.body.data.id as number
}
/** `n` notifications for `user`: `actor` likes `n` of their posts. */
async function seedMany(server: TestServer, user: User, actor: User, n: number) {
  for (let i = 0; i < n; i++) await like(server, actor, await createPost(server, user, `post ${i}`))
}

test('null is a field that does not apply (no post), "" a post without text or image; the OpenAPI document says the same', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  const textOnly = await createPost(server, alice, 'just words')
  const imageOnly = await createPost(server, alice, '', await seedUpload(server, alice.id, 'image/jpeg', 'posts'))
  await like(server, bob, textOnly)
  await comment(server, bob, imageOnly, 'nice')
  await follow(server, bob, alice)
  const [followed, commented, liked] = (await list(server, alice)).body.data.notifications
  assert.equal([followed.type, followed.post_id, followed.post_content, followed.post_image, followed.story_id], ['follow', null, null, null, null])
  assert.equal([commented.type, commented.post_content, typeof commented.post_image], ['comment', '', 'string'])
  assert.ok(commented.post_image.startsWith('uploads/posts/'))
  assert.equal([liked.type, liked.post_content, liked.post_image], ['like', 'just words', ''])

  const document = (await server.request('GET', '/api/openapi.json')).body
  const schema = document.components.schemas.Notification
  assert.match(schema.description, /Fields that do not apply are null/)
  for (const field of ['post_id', 'post_content', 'post_image', 'story_id']) {
    const property = schema.properties[field]
    assert.ok(JSON.stringify(property.anyOf ?? property.type).includes('null'), `${field} is nullable`)
    assert.match(property.description, /null/, field)
  }
  for (const field of ['post_content', 'post_image']) assert.match(schema.properties[field].description, /"" when it has none\); null without a post/)
  await server.close()
})

test('the list has every Notification field, newest first; fields that do not apply are null', async () => {
  const clock = manualClock(new Date('2026-04-01T09:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  const photo = await seedUpload(server, alice.id, 'image/jpeg', 'posts')
  const postId = await createPost(server, alice, 'sunset #beach', photo)

  await follow(server, bob, alice)
  clock.advance(1000)
  await like(server, carol, postId)
  clock.advance(1000)
  await comment(server, bob, postId, 'nice')
  clock.advance(1000)
  const storyId = await viewStoryOf(server, carol, alice)

  const res = await list(server, alice)
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  const { notifications, page, has_more } = res.body.data
  assert.is(page, 1)
  assert.is(has_more, false)
  const actor = (u: User) => ({
    actor_id: u.id, actor_username: u.username, actor_full_name: `Name ${u.username}`, actor_avatar: '',
    actor_avatar_width: null, actor_avatar_height: null, actor_avatar_blurhash: null, actor_is_verified: false,
  })
  // The photo was recorded without metadata (seeded), so its siblings are null too.
  const postImage = { post_image_width: null, post_image_height: null, post_image_blurhash: null }
  const noPost = { post_id: null, post_content: null, post_image: null, ...postImage }
  assert.equal(notifications, [
    { id: notifications[0].id, type: 'story_view', is_read: false, created_at: '2026-04-01 09:00:03', ...actor(carol), ...noPost, story_id: storyId },
    { id: notifications[1].id, type: 'comment', is_read: false, created_at: '2026-04-01 09:00:02', ...actor(bob), post_id: postId, post_content: 'sunset #beach', post_image: photo, ...postImage, story_id: null },
    { id: notifications[2].id, type: 'like', is_read: false, created_at: '2026-04-01 09:00:01', ...actor(carol), post_id: postId, post_content: 'sunset #beach', post_image: photo, ...postImage, story_id: null },
    { id: notifications[3].id, type: 'follow', is_read: false, created_at: '2026-04-01 09:00:00', ...actor(bob), ...noPost, story_id: null },
  ])
  assert.ok(notifications[0].id > notifications[1].id && notifications[1].id > notifications[2].id)
  await server.close()
})

test('nobody sees another user\'s notifications, and nobody is notified of their own actions', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  const own = await createPost(server, alice, 'mine')
  await like(server, alice, own)
  await comment(server, alice, own, 'my own comment')
  await viewStoryOf(server, alice, alice)
  assert.equal((await list(server, bob)).body.data.notifications, [])
  assert.is(await count(server, bob), 0)
  const aliceNotes = (await list(server, alice)).body.data.notifications
  assert.equal(aliceNotes.map((n: any) => [n.type, n.actor_id]), [['follow', bob.id]])
  await server.close()
})

test('pages: default 20, has_more, limit clamped to 50, bad values 400', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await seedMany(server, alice, bob, 55)

  const first = await list(server, alice)
  assert.is(first.body.data.notifications.length, 20)
  assert.is(first.body.data.has_more, true)
  const ids = (res: any) => res.body.data.notifications.map((n: any) => n.id)

  const p1 = await list(server, alice, '?limit=25')
  const p2 = await list(server, alice, '?limit=25&page=2')
  const p3 = await list(server, alice, '?limit=25&page=3')
  assert.equal([p1.body.data.page, p2.body.data.page, p3.body.data.page], [1, 2, 3])
  assert.equal([ids(p1).length, ids(p2).length, ids(p3).length], [25, 25, 5])
  assert.equal([p1.body.data.has_more, p2.body.data.has_more, p3.body.data.has_more], [true, true, false])
  const all = [...ids(p1), ...ids(p2), ...ids(p3)]
  assert.is(new Set(all).size, 55, 'no overlap between pages')
  assert.equal(all, [...all].sort((a, b) => b - a), 'newest first across pages')

  const beyond = await list(server, alice, '?page=9')
  assert.equal([beyond.status, beyond.body.data.notifications, beyond.body.data.has_more], [200, [], false])
  const clamped = await list(server, alice, '?limit=500')
  assert.is(clamped.status, 200)
  assert.is(clamped.body.data.notifications.length, 50)
  assert.is(clamped.body.data.has_more, true)

  for (const bad of ['?limit=0', '?limit=-1', '?limit=abc', '?page=0', '?page=x', '?page=1.5', '?unread_only=maybe']) {
    const res = await list(server, alice, bad)
    assert.is(res.status, 400, bad)
    assert.is(res.body.status, 'error')
    assert.match(res.body.message, /limit|page|unread_only/, bad)
  }
  await server.close()
})

test('unread_only filters; count is the number unread', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await seedMany(server, alice, bob, 3)
  assert.is(await count(server, alice), 3)
  const oldest = (await list(server, alice)).body.data.notifications[2].id
  assert.equal((await markRead(server, alice, oldest)).body.data, { updated: 1 })

  assert.is(await count(server, alice), 2)
  for (const query of ['?unread_only=true', '?unread_only=1']) {
    const unread = (await list(server, alice, query)).body.data.notifications
    assert.is(unread.length, 2, query)
    assert.ok(unread.every((n: any) => !n.is_read && n.id !== oldest), query)
  }
  for (const query of ['', '?unread_only=false', '?unread_only=0']) {
    const everything = (await list(server, alice, query)).body.data.notifications
    assert.equal(everything.map((n: any) => n.is_read), [false, false, true], query)
  }
  const paged = await list(server, alice, '?unread_only=true&limit=1')
  assert.equal([paged.body.data.notifications.length, paged.body.data.has_more], [1, true])
  await server.close()
})

test('mark one read: own only; someone else\'s or a missing id is 404 and changes nothing', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  await follow(server, alice, bob)
  const aliceNote = (await list(server, alice)).body.data.notifications[0].id
  const bobNote = (await list(server, bob)).body.data.notifications[0].id

  const stolen = await markRead(server, alice, bobNote)
  assert.is(stolen.status, 404)
  assert.equal([stolen.body.status, stolen.body.message, stolen.body.data], ['error', 'Notification not found', null])
  assert.is(await count(server, bob), 1, 'bob\'s notification is still unread')
  assert.is((await markRead(server, alice, 999999)).status, 404)
  for (const bad of ['abc', '0', '-1']) {
    const res = await markRead(server, alice, bad)
    assert.is(res.status, 400, bad)
    assert.match(res.body.message, /notification_id/)
  }

  const done = await markRead(server, alice, aliceNote)
  assert.is(done.status, 200)
  assert.equal(done.body.data, { updated: 1 })
  assert.is((await list(server, alice)).body.data.notifications[0].is_read, true)
  assert.equal((await markRead(server, alice, aliceNote)).body.data, { updated: 0 }, 'already read: nothing changed, still 200')
  assert.is(await count(server, alice), 0)
  await server.close()
})

test('mark all read marks every unread notification of the caller and nobody else\'s', async () => {
  const server = await startTestServer()
  const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await seedMany(server, alice, bob, 4)
  await seedMany(server, carol, bob, 2)
  const first = (await list(server, alice)).body.data.notifications[0].id
  await markRead(server, alice, first)

  const res = await markRead(server, alice)
  assert.is(res.status, 200)
  assert.equal(res.body.data, { updated: 3 })
  assert.is(await count(server, alice), 0)
  assert.ok((await list(server, alice)).body.data.notifications.every((n: any) => n.is_read))
  assert.is(await count(server, carol), 2, 'carol\'s notifications untouched')
  assert.equal((await markRead(server, alice)).body.data, { updated: 0 })
  // A trailing slash is the same "all" path.
  assert.equal((await server.request('PUT', `${API}/notifications/mark_read/`, { token: carol.token })).body.data, { updated: 2 })
  await server.close()
})

test('the unread count stays exact through every way a notification comes and goes', async () => {
  const server = await startTestServer()
  const [alice, bob, carol, dave, erin] = [await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server)]
  const exact = async (want: number, context: string) => {
    assert.is(await count(server, alice), want, context)
    assert.equal(await counterDrift(server), [], context)
  }
  const post = await createPost(server, alice, 'first')
  await follow(server, bob, alice)
  await like(server, bob, post)
  const commentId = (await comment(server, carol, post, 'nice')).id as number
  const story = await viewStoryOf(server, dave, alice)
  await exact(4, 'a follow, a like, a comment and a story view')
  await like(server, alice, post)
  await exact(4, 'her own like tells nobody')

  await server.request('DELETE', `${API}/interactions/unlike/${post}`, { token: bob.token })
  await exact(4, 'an unlike leaves the notification')
  assert.is((await server.request('DELETE', `${API}/interactions/comment/${commentId}`, { token: carol.token })).status, 200)
  await exact(3, 'a deleted comment takes its notification')
  assert.is((await server.request('DELETE', `${API}/stories/${story}`, { token: alice.token })).status, 200)
  await exact(2, 'a deleted story takes its view\'s')
  assert.is((await server.request('DELETE', `${API}/posts/${post}`, { token: alice.token })).status, 200)
  await exact(1, 'a deleted post takes its like\'s')

  const second = await createPost(server, alice, 'second')
  await like(server, carol, second)
  await like(server, dave, second)
  await like(server, erin, second)
  await exact(4, 'three likes more')
  assert.is((await server.request('POST', `${API}/user/block/${carol.id}`, { token: alice.token })).status, 200)
  await exact(3, 'a block deletes the notifications between the two')
  await suspendUser(server.services, dave.id, { moderator: 'mod', note: '' }, new Date())
  await exact(2, 'a suspension marks those its account caused read')
  const gone = await server.request('DELETE', `${API}/user/account`, { token: erin.token, body: { password: 'correct horse' } })
  assert.is(gone.status, 200, JSON.stringify(gone.body))
  await exact(1, 'a deleted account takes the notifications it caused')
  assert.equal((await list(server, alice, '?unread_only=true')).body.data.notifications.map((n: any) => [n.type, n.actor_id]), [['follow', bob.id]])

  const bobGone = await server.request('DELETE', `${API}/user/account`, { token: bob.token, body: { password: 'correct horse' } })
  assert.is(bobGone.status, 200)
  await exact(0, 'and the last one')
  const deleted = await server.request('DELETE', `${API}/user/account`, { token: alice.token, body: { password: 'correct horse' } })
  assert.is(deleted.status, 200)
  assert.equal(await counterDrift(server), [], 'a deleted recipient')
  await server.close()
})

test('after mark all read, the unread ones are those that came since (the read-up-to mark), exactly', async () => {
  const server = await startTestServer()
  const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await seedMany(server, alice, bob, 3)
  await seedMany(server, bob, carol, 2)
  assert.equal((await markRead(server, alice)).body.data, { updated: 3 })
  const mark = async (user: User) => Number((await rawMark(server, user.id)) ?? -1)
  const newest = (await list(server, alice)).body.data.notifications[0].id
  assert.is(await mark(alice), newest, 'the mark is her newest notification')
  assert.is(await mark(bob), 0, 'bob\'s mark did not move')

  await seedMany(server, alice, carol, 3)
  const fresh = (await list(server, alice, '?unread_only=true')).body.data.notifications.map((n: any) => n.id)
  assert.is(fresh.length, 3)
  assert.ok(fresh.every((id: number) => id > newest))
  assert.equal((await markRead(server, alice, fresh[1])).body.data, { updated: 1 })
  assert.equal((await list(server, alice, '?unread_only=true')).body.data.notifications.map((n: any) => n.id), [fresh[0], fresh[2]])
  assert.is(await count(server, alice), 2)
  assert.equal(await counterDrift(server), [])
  assert.equal((await markRead(server, alice)).body.data, { updated: 2 })
  assert.is(await mark(alice), fresh[0])
  assert.equal((await list(server, alice, '?unread_only=true')).body.data.notifications, [])
  assert.equal((await markRead(server, carol)).body.data, { updated: 0 }, 'nothing to mark')
  assert.is(await mark(carol), 0, 'a user without notifications keeps the mark at 0')
  assert.equal(await counterDrift(server), [])
  await server.close()
})

test('an account\'s notifications are found by a scan off the write lock, and those written since are caught by their ids', async () => {
  const server = await startTestServer()
  const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  const post = await createPost(server, alice, 'hello')
  await follow(server, bob, alice)
  await like(server, bob, post)
  await like(server, carol, post)
  await follow(server, bob, carol)
  const found = await notificationsCausedBy(server.services.scans, bob.id)
  assert.is(found.ids.length, 3, 'bob\'s follow of alice, his like and his follow of carol')
  const unread = await notificationsCausedBy(server.services.scans, bob.id, true)
  assert.equal(unread.ids, found.ids)

  // After the scan: one of them is marked read, and bob acts again.
  assert.is((await markRead(server, carol)).status, 200)
  await comment(server, bob, post, 'again')
  const db = rawClient(server)
  const actors = async () => (await db.execute('select actor_id as a, count(*) as n from notifications group by actor_id order by actor_id')).rows.map((row) => [Number(row.a), Number(row.n)])
  assert.equal(await actors(), [[bob.id, 4], [carol.id, 1]])

  // In one statement under the write lock: primary-key lookups and one range, no scan.
  const { sql: text, params } = server.services.db.update(notificationsTable).set({ isRead: true }).where(causedBy(found)).toSQL()
  const plan = (await db.execute({ sql: `explain query plan ${text}`, args: params as never[] })).rows.map((row) => String(row.detail)).join('\n')
  assert.match(plan, /MULTI-INDEX OR/)
  assert.match(plan, /SEARCH notifications USING INTEGER PRIMARY KEY \(rowid=\?\)/)
  assert.match(plan, /SEARCH notifications USING INTEGER PRIMARY KEY \(rowid>\?\)/)
  assert.not.match(plan, /SCAN notifications/)

  await writeTransaction(server.services.db, (tx) => tx.run(sql`delete from notifications where ${causedBy(found)}`))
  assert.equal(await actors(), [[carol.id, 1]], 'every one of bob\'s, the later comment too; carol\'s untouched')
  assert.equal(await counterDrift(server), [])
  await server.close()
})

test('every notification endpoint needs a valid token; wrong methods are 405', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  const id = (await list(server, alice)).body.data.notifications[0].id
  for (const [method, path] of [
    ['GET', '/notifications/list'],
    ['GET', '/notifications/count'],
    ['PUT', '/notifications/mark_read'],
    ['PUT', `/notifications/mark_read/${id}`],
  ]) {
    const res = await server.request(method, API + path)
    assert.is(res.status, 401, path)
    assert.is(res.body.status, 'error')
    assert.is((await server.request(method, API + path, { token: 'plz_forged' })).status, 401, path)
  }
  assert.is(await count(server, alice), 1)
  assert.is((await server.request('POST', `${API}/notifications/mark_read`, { token: alice.token })).status, 405)
  assert.is((await server.request('DELETE', `${API}/notifications/list`, { token: alice.token })).status, 405)
  await server.close()
})

test('the list is served by the page index in one query with joins; the count by the user\'s counter', async () => {
  const server = await startTestServer()
  const db = server.services.db
  const all = await queryPlan(server, notificationListQuery(db, 1, { page: 2, limit: 20, unreadOnly: false }))
  // The page index holds every column a page shows: no lookup in the table per row.
  assert.match(all, /SEARCH notifications USING COVERING INDEX notifications_user_page_idx \(user_id=\?\)/)
  const unread = await queryPlan(server, notificationListQuery(db, 1, { page: 1, limit: 20, unreadOnly: true }))
  // Unread pages: only the range past the user's read-up-to mark, filtered in the covering index.
  assert.match(unread, /SEARCH notifications USING COVERING INDEX notifications_user_page_idx \(user_id=\? AND id>\?\)/)
  for (const plan of [all, unread]) {
    assert.match(plan, /SEARCH users USING INTEGER PRIMARY KEY/)
    assert.match(plan, /SEARCH posts USING INTEGER PRIMARY KEY/)
    // The one scan allowed is of the partial index of suspended accounts (a set read once per statement).
    assert.not.match(plan.replace(/SCAN users USING (COVERING )?INDEX users_suspended_idx/g, ''), /SCAN|TEMP B-TREE/, 'no full scan and no sort: the index gives newest-first order')
  }
  // The badge is the user's counter: one key of users, no notification read.
  const counted = await queryPlan(server, unreadCountQuery(db, 1))
  assert.match(counted, /SEARCH users USING INTEGER PRIMARY KEY \(rowid=\?\)/)
  assert.not.match(counted, /notifications|SCAN/)
  await server.close()
})

test('the first pages are read inline; pages past INLINE_PAGE_DEPTH rows go to the workers', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  for (const unreadOnly of [false, true]) {
    const shallow = countingSelects(server.services.scans)
    const first = await listNotifications({ reads: server.services.reads, scans: shallow.db }, alice.id, { page: 1, limit: 20, unreadOnly })
    assert.equal(first.notifications.map((n) => [n.type, n.actor_id]), [['follow', bob.id]])
    assert.is(shallow.selects(), 0, 'page 1 is read inline')

    const deep = countingSelects(server.services.scans)
    const page = INLINE_PAGE_DEPTH / 20 + 1
    assert.equal(await listNotifications({ reads: server.services.reads, scans: deep.db }, alice.id, { page, limit: 20, unreadOnly }), { notifications: [], page, has_more: false })
    assert.is(deep.selects(), 1, 'a deep page goes to the workers')
  }
  await server.close()
})

test.run()
