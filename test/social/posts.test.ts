import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { exploreRefreshed } from '../../src/server/domain/explore.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { followUser, post, seedUpload, rawClient } from './helpers.js'

const clock = manualClock()
let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock })
})
test.after(async () => {
  await server.close()
})

const HOUR = 3_600_000
const ids = (res: any) => res.body.data.posts.map((p: any) => p.id)

test('create answers 201 with the Post, public by default, and counts the post on the profile', async () => {
  const alice = await registerUser(server)
  const image = await seedUpload(server, alice.id, 'posts')
  const res = await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'Hello #World', image } })
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  const created = res.body.data
  assert.equal(Object.keys(created).sort(), [
    'avatar', 'avatar_blurhash', 'avatar_height', 'avatar_width', 'bookmarked', 'comments_count', 'content', 'created_at', 'edited_at', 'full_name', 'id', 'image',
    'image_blurhash', 'image_height', 'image_width', 'is_public', 'is_verified', 'likes_count', 'media', 'mentions', 'user_id', 'user_liked', 'username',
  ])
  // A file recorded without its metadata (as before issue 13) answers nulls.
  assert.equal([created.image_width, created.image_height, created.image_blurhash], [null, null, null])
  assert.is(created.edited_at, null)
  assert.is(created.content, 'Hello #World')
  assert.is(created.image, image)
  assert.is(created.is_public, true)
  assert.is(created.likes_count, 0)
  assert.is(created.comments_count, 0)
  assert.is(created.user_liked, false)
  assert.is(created.username, alice.username)
  assert.is(created.user_id, alice.id)
  assert.match(created.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  const profile = await server.request('GET', '/api/mobile/user/profile', { token: alice.token })
  assert.is(profile.body.data.posts_count, 1)
})

test('create validates: empty post, too long, foreign or wrong-kind image, bad is_public, no token', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const bobs = await seedUpload(server, bob.id, 'posts')
  const avatar = await seedUpload(server, alice.id, 'avatars')
  const cases: Array<[unknown, number]> = [
    [{}, 400],
    [{ content: '   ' }, 400],
    [{ content: 'x'.repeat(2201) }, 400],
    [{ content: 'hi', image: bobs }, 400],
    [{ content: 'hi', image: avatar }, 400],
    [{ content: 'hi', image: 'uploads/posts/../../x.jpg' }, 400],
    [{ content: 'hi', is_public: 'yes' }, 400],
  ]
  for (const [body, status] of cases) {
    const res = await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body })
    assert.is(res.status, status, JSON.stringify(body))
    assert.is(res.body.status, 'error')
  }
  assert.is((await server.request('POST', '/api/mobile/posts/create', { body: { content: 'hi' } })).status, 401)
  const profile = await server.request('GET', '/api/mobile/user/profile', { token: alice.token })
  assert.is(profile.body.data.posts_count, 0)
  // exactly at the limit is fine, and so is an image without text
  assert.is((await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'x'.repeat(2200) } })).status, 201)
  const image = await seedUpload(server, alice.id, 'posts')
  assert.is((await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { image } })).status, 201)
})

test('hashtags are extracted once per post, lower-cased, and counted over public posts', async () => {
  const alice = await registerUser(server)
  const tag = `tag${Date.now()}`
  await post(server, alice.token, { content: `#${tag} and #${tag.toUpperCase()} again, not a#b` })
  await post(server, alice.token, { content: `second #${tag}` })
  await post(server, alice.token, { content: `hidden #${tag}x`, is_public: false })
  const rows = await rawClient(server).execute({ sql: 'select tag, posts_count from hashtags where tag like ? order by tag', args: [`${tag}%`] })
  assert.equal(rows.rows.map((r) => [r.tag, Number(r.posts_count)]), [
    [tag, 2],
    [`${tag}x`, 0],
  ])
  const links = await rawClient(server).execute({ sql: 'select count(*) as n from post_hashtags ph join hashtags h on h.id = ph.hashtag_id where h.tag = ?', args: [tag] })
  assert.is(Number(links.rows[0].n), 2)
  const b = await rawClient(server).execute("select count(*) as n from hashtags where tag = 'b'")
  assert.is(Number(b.rows[0].n), 0)
})

test('feed: followed users and own posts, newest first, non-public ones of followed users included, others never', async () => {
  const me = await registerUser(server)
  const friend = await registerUser(server)
  const stranger = await registerUser(server)
  await followUser(server, me.token, friend.id)
  const a = await post(server, friend.token, { content: 'friend public' })
  clock.advance(1000)
  const b = await post(server, me.token, { content: 'mine' })
  clock.advance(1000)
  const c = await post(server, friend.token, { content: 'friend private', is_public: false })
  clock.advance(1000)
  await post(server, stranger.token, { content: 'stranger' })
  const feed = await server.request('GET', '/api/mobile/posts/feed', { token: me.token })
  assert.is(feed.status, 200)
  assert.equal(ids(feed), [c.id, b.id, a.id])
  assert.is(feed.body.data.page, 1)
  assert.is(feed.body.data.has_more, false)
  assert.is((await server.request('GET', '/api/mobile/posts/feed')).status, 401)
})

test('feed pages: page/limit/has_more, limit clamped to 50, bad values 400', async () => {
  const me = await registerUser(server)
  for (let i = 0; i < 55; i++) {
    await post(server, me.token, { content: `post ${i}` })
    clock.advance(1)
  }
  const first = await server.request('GET', '/api/mobile/posts/feed?limit=2', { token: me.token })
  const second = await server.request('GET', '/api/mobile/posts/feed?limit=2&page=2', { token: me.token })
  assert.is(first.body.data.posts[0].content, 'post 54')
  assert.is(second.body.data.posts[0].content, 'post 52')
  assert.is(second.body.data.page, 2)
  const byDefault = await server.request('GET', '/api/mobile/posts/feed', { token: me.token })
  assert.is(byDefault.body.data.posts.length, 20)
  const clamped = await server.request('GET', '/api/mobile/posts/feed?limit=500', { token: me.token })
  assert.is(clamped.body.data.posts.length, 50)
  assert.is(clamped.body.data.has_more, true)
  const last = await server.request('GET', '/api/mobile/posts/feed?limit=50&page=2', { token: me.token })
  assert.is(last.body.data.posts.length, 5)
  assert.is(last.body.data.has_more, false)
  for (const q of ['page=0', 'page=-1', 'page=x', 'limit=0', 'limit=1.5', 'limit=abc']) {
    assert.is((await server.request('GET', `/api/mobile/posts/feed?${q}`, { token: me.token })).status, 400, q)
  }
})

test('explore: public posts only, ranked by (likes + 2·comments + 1) / (age_hours + 2)², ties newest first', async () => {
  // A fresh server so other tests' posts don't take part in the ranking.
  const local = manualClock(new Date('2026-03-01T00:00:00Z'))
  const s = await startTestServer({ clock: local.clock })
  try {
    const author = await registerUser(s)
    const fans = [await registerUser(s), await registerUser(s), await registerUser(s)]
    const old = await post(s, author.token, { content: 'old but loved' }) // t = 0
    local.advance(10 * HOUR)
    const middle = await post(s, author.token, { content: 'middle' }) // t = 10h
    const hidden = await post(s, author.token, { content: 'private', is_public: false })
    local.advance(HOUR)
    const fresh = await post(s, author.token, { content: 'fresh' }) // t = 11h
    const fresh2 = await post(s, author.token, { content: 'fresh twin' }) // same instant as fresh
    for (const fan of fans) assert.is((await s.request('POST', `/api/mobile/interactions/like/${old.id}`, { token: fan.token })).status, 200)
    await s.request('POST', `/api/mobile/interactions/comment/${middle.id}`, { token: fans[0].token, body: { content: 'nice' } })
    // scores at t = 11h: old (3+1)/13² = 0.0237; middle (2+1)/3² = 0.333; fresh and fresh2 1/2² = 0.25
    const res = await s.request('GET', '/api/mobile/posts/explore')
    assert.is(res.status, 200)
    assert.equal(ids(res), [middle.id, fresh2.id, fresh.id, old.id])
    assert.not.ok(ids(res).includes(hidden.id))
    // 40 hours later, the liked post's likes no longer beat age: (4)/(53²) vs (3)/(43²) → middle first, then old
    local.advance(40 * HOUR)
    await s.request('GET', '/api/mobile/posts/explore') // served the stale ranking, starts the recompute
    await exploreRefreshed(s.services.scans)
    const later = await s.request('GET', '/api/mobile/posts/explore?limit=2', { token: fans[0].token })
    assert.equal(ids(later), [middle.id, old.id])
    assert.is(later.body.data.has_more, true)
    assert.equal(later.body.data.posts.map((p: any) => p.user_liked), [false, true])
  } finally {
    await s.close()
  }
})

test('detail: the post and its comments oldest first; by user: newest first', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const p = await post(server, alice.token, { content: 'discuss' })
  for (const text of ['first', 'second', 'third']) {
    const res = await server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: bob.token, body: { content: text } })
    assert.is(res.status, 201)
    clock.advance(1000)
  }
  const detail = await server.request('GET', `/api/mobile/posts/detail/${p.id}`)
  assert.is(detail.status, 200)
  assert.is(detail.body.data.post.id, p.id)
  assert.is(detail.body.data.post.comments_count, 3)
  assert.equal(detail.body.data.comments.map((c: any) => c.content), ['first', 'second', 'third'])
  assert.equal(Object.keys(detail.body.data.comments[0]).sort(), [
    'avatar', 'avatar_blurhash', 'avatar_height', 'avatar_width', 'content', 'created_at', 'full_name', 'id', 'image',
    'image_blurhash', 'image_height', 'image_width', 'is_verified', 'mentions', 'parent_id', 'replies', 'replies_count', 'user_id', 'username',
  ])
  assert.is(detail.body.data.comments[0].username, bob.username)
  const paged = await server.request('GET', `/api/mobile/posts/detail/${p.id}?limit=2&page=2`)
  assert.equal(paged.body.data.comments.map((c: any) => c.content), ['third'])
  assert.is(paged.body.data.has_more, false)
  assert.is((await server.request('GET', '/api/mobile/posts/detail/999999')).status, 404)
  assert.is((await server.request('GET', '/api/mobile/posts/detail/abc')).status, 400)

  const q = await post(server, alice.token, { content: 'later' })
  const byUser = await server.request('GET', `/api/mobile/posts/user/${alice.id}`)
  assert.equal(ids(byUser), [q.id, p.id])
  assert.is((await server.request('GET', '/api/mobile/posts/user/999999')).status, 404)
})

test('visibility: a non-public post is seen by its author and followers only; everyone else gets 404', async () => {
  const author = await registerUser(server)
  const follower = await registerUser(server)
  const other = await registerUser(server)
  await followUser(server, follower.token, author.id)
  const secret = await post(server, author.token, { content: 'followers only' })
  const hidden = await post(server, author.token, { content: 'followers only', is_public: false })
  void secret

  for (const who of [author, follower]) {
    assert.is((await server.request('GET', `/api/mobile/posts/detail/${hidden.id}`, { token: who.token })).status, 200)
    const list = await server.request('GET', `/api/mobile/posts/user/${author.id}`, { token: who.token })
    assert.ok(ids(list).includes(hidden.id))
  }
  assert.ok(ids(await server.request('GET', '/api/mobile/posts/feed', { token: follower.token })).includes(hidden.id))
  for (const token of [other.token, undefined]) {
    assert.is((await server.request('GET', `/api/mobile/posts/detail/${hidden.id}`, { token })).status, 404)
    const list = await server.request('GET', `/api/mobile/posts/user/${author.id}`, { token })
    assert.not.ok(ids(list).includes(hidden.id))
    assert.is(list.body.data.posts.length, 1)
  }
  assert.is((await server.request('POST', `/api/mobile/interactions/like/${hidden.id}`, { token: other.token })).status, 404)
  assert.is((await server.request('DELETE', `/api/mobile/interactions/unlike/${hidden.id}`, { token: other.token })).status, 404)
  assert.is((await server.request('POST', `/api/mobile/interactions/comment/${hidden.id}`, { token: other.token, body: { content: 'hi' } })).status, 404)
  assert.not.ok(ids(await server.request('GET', '/api/mobile/posts/explore?limit=50')).includes(hidden.id))
  assert.not.ok(ids(await server.request('GET', '/api/mobile/posts/explore?limit=50', { token: follower.token })).includes(hidden.id))

  // once the follower unfollows, the post is hidden from them too
  await server.request('DELETE', `/api/mobile/user/unfollow/${author.id}`, { token: follower.token })
  assert.is((await server.request('GET', `/api/mobile/posts/detail/${hidden.id}`, { token: follower.token })).status, 404)
})

test.run()
