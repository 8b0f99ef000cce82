import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sql } from 'drizzle-orm'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { listFollows } from '../../src/server/domain/follows.js'
import { INLINE_PAGE_DEPTH } from '../../src/server/domain/page-depth.js'
import { countingSelects, followUser, notificationsOf, post } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const profile = async (token: string, id: number) => (await server.request('GET', `/api/mobile/user/profile/${id}`, { token })).body.data

test('follow returns the target profile after the change, keeps both counters, and notifies the target', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const res = await server.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: bob.token })
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  assert.is(res.body.data.id, alice.id)
  assert.is(res.body.data.is_following, true)
  assert.is(res.body.data.followers_count, 1)
  assert.is((await profile(alice.token, bob.id)).following_count, 1)
  assert.equal(await notificationsOf(server, alice.id), [{ type: 'follow', actor_id: bob.id, post_id: null }])
})

test('a new follow answers the very profile the follower reads next: same keys in the same order, same values', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const carol = await registerUser(server)
  assert.is((await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { full_name: 'Alice A.', bio: 'Coffee, mostly' } })).status, 200)
  await post(server, alice.token, { content: 'first' })
  await post(server, alice.token, { content: 'second' })
  const story = await server.request('POST', '/api/mobile/stories/create', { token: alice.token, body: { content_type: 'text', text_content: 'hello' } })
  assert.is(story.status, 201, JSON.stringify(story.body))
  await followUser(server, carol.token, alice.id)
  const res = await server.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: bob.token })
  assert.is(res.status, 200)
  const read = await profile(bob.token, alice.id)
  assert.is(JSON.stringify(res.body.data), JSON.stringify(read))
  assert.equal([read.followers_count, read.posts_count, read.active_stories_count, read.is_following, read.bio], [2, 2, 1, true, 'Coffee, mostly'])
})

test('following twice changes nothing and succeeds (no second notification)', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  await followUser(server, bob.token, alice.id)
  const again = await server.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: bob.token })
  assert.is(again.status, 200)
  assert.is(again.body.data.followers_count, 1)
  assert.is((await profile(alice.token, bob.id)).following_count, 1)
  assert.is((await notificationsOf(server, alice.id)).length, 1)
})

test('unfollow is idempotent and restores the counters', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  await followUser(server, bob.token, alice.id)
  const res = await server.request('DELETE', `/api/mobile/user/unfollow/${alice.id}`, { token: bob.token })
  assert.is(res.status, 200)
  assert.is(res.body.data.is_following, false)
  assert.is(res.body.data.followers_count, 0)
  const again = await server.request('DELETE', `/api/mobile/user/unfollow/${alice.id}`, { token: bob.token })
  assert.is(again.status, 200)
  assert.is(again.body.data.followers_count, 0)
  assert.is((await profile(alice.token, bob.id)).following_count, 0)
})

test('follow or unfollow yourself is 400, a missing user 404, no token 401, bad id 400', async () => {
  const alice = await registerUser(server)
  assert.is((await server.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: alice.token })).status, 400)
  assert.is((await server.request('DELETE', `/api/mobile/user/unfollow/${alice.id}`, { token: alice.token })).status, 400)
  assert.is((await server.request('POST', '/api/mobile/user/follow/999999', { token: alice.token })).status, 404)
  assert.is((await server.request('DELETE', '/api/mobile/user/unfollow/999999', { token: alice.token })).status, 404)
  assert.is((await server.request('POST', `/api/mobile/user/follow/${alice.id}`)).status, 401)
  assert.is((await server.request('POST', '/api/mobile/user/follow/-3', { token: alice.token })).status, 400)
  assert.is((await server.request('GET', '/api/mobile/user/follow/1', { token: alice.token })).status, 405)
  assert.is((await profile(alice.token, alice.id)).following_count, 0)
})

test('followers and following lists: UserSummary, newest first, paged, is_following for the caller, token optional', async () => {
  const star = await registerUser(server)
  const fans = []
  for (let i = 0; i < 3; i++) fans.push(await registerUser(server))
  for (const fan of fans) await followUser(server, fan.token, star.id)
  const viewer = await registerUser(server)
  await followUser(server, viewer.token, fans[2].id)

  const first = await server.request('GET', `/api/mobile/user/followers/${star.id}?limit=2`, { token: viewer.token })
  assert.is(first.status, 200)
  assert.is(first.body.data.page, 1)
  assert.is(first.body.data.has_more, true)
  assert.equal(first.body.data.users.map((u: any) => u.id), [fans[2].id, fans[1].id])
  assert.equal(first.body.data.users[0], {
    id: fans[2].id,
    username: fans[2].username,
    full_name: `Name ${fans[2].username}`,
    avatar: '',
    avatar_width: null,
    avatar_height: null,
    avatar_blurhash: null,
    avatar_alt: '',
    is_verified: false,
    is_following: true,
    is_private: false,
  })
  assert.is(first.body.data.users[1].is_following, false)
  const second = await server.request('GET', `/api/mobile/user/followers/${star.id}?limit=2&page=2`)
  assert.equal(second.body.data.users.map((u: any) => u.id), [fans[0].id])
  assert.is(second.body.data.has_more, false)
  assert.is(second.body.data.users[0].is_following, false)

  const following = await server.request('GET', `/api/mobile/user/following/${fans[0].id}`)
  assert.is(following.status, 200)
  assert.equal(following.body.data.users.map((u: any) => u.username), [star.username])
  const byName = await server.request('GET', `/api/mobile/user/following/${fans[0].username}`)
  assert.equal(byName.body.data.users.map((u: any) => u.id), [star.id])
})

test('lists: missing user 404, bad paging 400, limit clamped to 50, bad token 401', async () => {
  const alice = await registerUser(server)
  assert.is((await server.request('GET', '/api/mobile/user/followers/999999')).status, 404)
  assert.is((await server.request('GET', `/api/mobile/user/followers/${alice.id}?page=0`)).status, 400)
  assert.is((await server.request('GET', `/api/mobile/user/followers/${alice.id}?limit=abc`)).status, 400)
  const clamped = await server.request('GET', `/api/mobile/user/following/${alice.id}?limit=500`)
  assert.is(clamped.status, 200)
  assert.is((await server.request('GET', `/api/mobile/user/followers/${alice.id}`, { token: 'nope' })).status, 401)
})

test('follower lists read shallow pages inline and send pages past INLINE_PAGE_DEPTH rows to the workers', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  await followUser(server, bob.token, alice.id)
  for (const which of ['followers', 'following'] as const) {
    const shallow = countingSelects(server.services.scans)
    const first = await listFollows({ reads: server.services.reads, scans: shallow.db }, which, which === 'followers' ? alice.id : bob.id, null, { page: 1, limit: 20 })
    assert.equal(first.users.map((u) => u.id), [which === 'followers' ? bob.id : alice.id])
    assert.is(shallow.selects(), 0, `${which}: page 1 is read inline`)

    const deep = countingSelects(server.services.scans)
    const limit = 50
    const page = INLINE_PAGE_DEPTH / limit + 1
    const far = await listFollows({ reads: server.services.reads, scans: deep.db }, which, alice.id, null, { page, limit })
    assert.equal(far, { users: [], page, has_more: false })
    assert.is(deep.selects(), 1, `${which}: a deep page goes to the workers`)
  }
})

test('whom a user follows: newest first, ties by the higher id, accounts hidden from the caller left out before paging', async () => {
  const { clock, advance } = manualClock()
  const local = await startTestServer({ clock })
  try {
    const fan = await registerUser(local)
    const [a, b, c, d] = [await registerUser(local), await registerUser(local), await registerUser(local), await registerUser(local)]
    // a, b and c followed in the same millisecond, d a second later.
    for (const user of [b, a, c]) await followUser(local, fan.token, user.id)
    advance(1000)
    await followUser(local, fan.token, d.id)
    const ids = async (query: string, token?: string) => {
      const res = await local.request('GET', `/api/mobile/user/following/${fan.id}?${query}`, { token })
      assert.is(res.status, 200)
      return { ids: res.body.data.users.map((u: any) => u.id), more: res.body.data.has_more }
    }
    assert.equal(await ids('limit=10'), { ids: [d.id, c.id, b.id, a.id], more: false })
    const viewer = await registerUser(local)
    assert.is((await local.request('POST', `/api/mobile/user/block/${b.id}`, { token: viewer.token })).status, 200)
    assert.equal(await ids('limit=2', viewer.token), { ids: [d.id, c.id], more: true })
    assert.equal(await ids('limit=2&page=2', viewer.token), { ids: [a.id], more: false })
    assert.equal(await ids('limit=2&page=2'), { ids: [b.id, a.id], more: false })
  } finally {
    await local.close()
  }
})

test('whom a user follows is sorted from all of them: past INLINE_PAGE_DEPTH accounts even page 1 goes to the workers', async () => {
  const local = await startTestServer()
  try {
    const fan = await registerUser(local)
    const star = await registerUser(local)
    await followUser(local, fan.token, star.id)
    const first = async () => {
      const scans = countingSelects(local.services.scans)
      const page = await listFollows({ reads: local.services.reads, scans: scans.db }, 'following', fan.id, null, { page: 1, limit: 20 })
      assert.equal(page.users.map((u) => u.id), [star.id])
      return scans.selects()
    }
    assert.is(await first(), 0)
    // Only the count decides (this server is thrown away after): as if fan followed one account more than the depth.
    await local.services.db.run(sql`update users set following_count = ${INLINE_PAGE_DEPTH + 1} where id = ${fan.id}`)
    assert.is(await first(), 1)
  } finally {
    await local.close()
  }
})

test.run()
