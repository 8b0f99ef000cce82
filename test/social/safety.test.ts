/**
 * Blocks, mutes, suspensions and deletions, table-driven: for each way one account's content can
 * be hidden from another, a fresh network is built, the change applied, and every list, search,
 * detail and notification path is asked what each side sees.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { suspendUser, unsuspendUser } from '../../src/server/domain/moderation.js'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, post, timelineIdsOf } from './helpers.js'

const API = '/api/mobile'

/**
 * Alice and bob follow each other and have each posted, commented, replied, liked, saved the other's
 * post and told a story; carol is a bystander both follow.
 */
async function network() {
  const server = await startTestServer()
  const alice = await registerUser(server, 'alice_s')
  const bob = await registerUser(server, 'bob_s')
  const carol = await registerUser(server, 'carol_s')
  for (const [a, b] of [[alice, bob], [bob, alice], [alice, carol], [bob, carol]] as const) await followUser(server, a.token, b.id)
  const content = (who: RegisteredUser) => ({
    post: 0,
    story: 0,
    comment: 0,
    reply: 0,
    word: `zq${who.username.replace(/_s$/, '')}word`,
  })
  const made = { alice: content(alice), bob: content(bob) }
  const carolPost = await post(server, carol.token, { content: 'carol says hi' })
  const carolComment = (await server.request('POST', `${API}/interactions/comment/${carolPost.id}`, { token: carol.token, body: { content: 'reply to me' } })).body.data.id
  for (const [who, mine] of [[alice, made.alice], [bob, made.bob]] as const) {
    mine.post = (await post(server, who.token, { content: `${mine.word} #${mine.word}` })).id
    const story = await server.request('POST', `${API}/stories/create`, { token: who.token, body: { content_type: 'text', text_content: mine.word } })
    mine.story = story.body.data.id
    const comment = await server.request('POST', `${API}/interactions/comment/${carolPost.id}`, { token: who.token, body: { content: mine.word } })
    mine.comment = comment.body.data.id
    const reply = await server.request('POST', `${API}/interactions/comment/${carolPost.id}`, { token: who.token, body: { content: mine.word, parent_id: carolComment } })
    mine.reply = reply.body.data.id
  }
  // Each likes and saves the other's post: a notification for the other.
  for (const [who, other] of [[alice, made.bob], [bob, made.alice]] as const) {
    assert.is((await server.request('POST', `${API}/interactions/like/${other.post}`, { token: who.token })).status, 200)
    assert.is((await server.request('POST', `${API}/posts/${other.post}/bookmark`, { token: who.token })).status, 200)
  }
  await server.services.fanout.drain()
  return { server, alice, bob, carol, carolPost: carolPost.id, carolComment, made }
}

type Network = Awaited<ReturnType<typeof network>>

/** What `viewer` sees of `target` (whose post, story, comment and word are `of`), path by path. */
async function sees(net: Network, viewer: RegisteredUser, target: RegisteredUser, of: Network['made']['alice']) {
  const { server } = net
  const get = (path: string) => server.request('GET', API + path, { token: viewer.token })
  const ok = async (path: string) => (await get(path)).status === 200
  const ids = (list: Array<{ id: number }>) => list.map((item) => item.id)
  const feed = (await get('/posts/feed?limit=50')).body.data.posts
  const explore = (await get('/posts/explore?limit=50')).body.data.posts
  const searchAll = (await get(`/search/all?q=${of.word}`)).body.data
  const searchUsers = (await get(`/search/users?q=${target.username}`)).body.data.users
  const detail = (await get(`/posts/detail/${net.carolPost}?limit=50`)).body.data
  const carolFollowers = (await get(`/user/followers/${net.carol.id}`)).body.data.users
  const storyFeed = (await get('/stories/feed')).body.data as Array<{ user_id: number }>
  const notifications = (await get('/notifications/list?limit=50')).body.data.notifications as Array<{ actor_id: number }>
  const carolThread = (detail.comments as Array<{ id: number; replies: Array<{ id: number }> }>).find((c) => c.id === net.carolComment)!
  return {
    profile: await ok(`/user/profile/${target.id}`),
    'profile by name': await ok(`/user/profile/${target.username}`),
    'posts by user': await ok(`/posts/user/${target.id}`),
    'their followers': await ok(`/user/followers/${target.id}`),
    'post detail': await ok(`/posts/detail/${of.post}`),
    feed: ids(feed).includes(of.post),
    explore: ids(explore).includes(of.post),
    'search posts': ids(searchAll.posts).includes(of.post),
    'search users': ids(searchUsers).includes(target.id),
    'search all users': ids((await get(`/search/all?q=${target.username}`)).body.data.users).includes(target.id),
    'comment under a third post': ids(detail.comments).includes(of.comment),
    'in a third user\'s followers': ids(carolFollowers).includes(target.id),
    'story feed': storyFeed.some((group) => group.user_id === target.id),
    'story view': await ok(`/stories/view/${of.story}`),
    notifications: notifications.some((n) => n.actor_id === target.id),
    'hashtag page': ids((await get(`/posts/hashtag/${of.word}`)).body.data.posts).includes(of.post),
    bookmarks: ids((await get('/posts/bookmarks?limit=50')).body.data.posts).includes(of.post),
    'reply under a third comment': ids((await get(`/comments/${net.carolComment}/replies?limit=50`)).body.data.replies).includes(of.reply),
    'in a third comment\'s first replies': ids(carolThread.replies).includes(of.reply),
  }
}

const EVERYTHING = [
  'profile', 'profile by name', 'posts by user', 'their followers', 'post detail', 'feed', 'explore', 'search posts', 'search users',
  'search all users', 'comment under a third post', 'in a third user\'s followers', 'story feed', 'story view', 'notifications',
  'hashtag page', 'bookmarks', 'reply under a third comment', 'in a third comment\'s first replies',
] as const
type Path = (typeof EVERYTHING)[number]

const expectAll = (shown: boolean, except: Path[] = []) => Object.fromEntries(EVERYTHING.map((path) => [path, except.includes(path) ? !shown : shown]))

/** The relation, then what alice sees of bob and bob of alice. A block removes the follows, so the feeds empty either way. */
const cases: Array<{ name: string; apply: (net: Network) => Promise<void>; aliceSeesBob: Record<string, boolean>; bobSeesAlice: Record<string, boolean> }> = [
  {
    name: 'alice blocks bob',
    apply: async ({ server, alice, bob }) => void assert.is((await server.request('POST', `${API}/user/block/${bob.id}`, { token: alice.token })).status, 200),
    aliceSeesBob: expectAll(false),
    bobSeesAlice: expectAll(false),
  },
  {
    name: 'bob blocks alice',
    apply: async ({ server, alice, bob }) => void assert.is((await server.request('POST', `${API}/user/block/${alice.username}`, { token: bob.token })).status, 200),
    aliceSeesBob: expectAll(false),
    bobSeesAlice: expectAll(false),
  },
  {
    name: 'bob is suspended',
    apply: async ({ server, bob }) => void (await server.services.db.run(sql`update users set suspended_at = 1 where id = ${bob.id}`)),
    aliceSeesBob: expectAll(false),
    // Bob's own token is refused while suspended (moderation); what alice shows is unchanged for everyone else.
    bobSeesAlice: {},
  },
  {
    name: 'bob deletes his post, story, comment and reply',
    apply: async ({ server, bob, made }) => {
      for (const path of [`/posts/${made.bob.post}`, `/stories/${made.bob.story}`, `/interactions/comment/${made.bob.comment}`, `/interactions/comment/${made.bob.reply}`]) {
        assert.is((await server.request('DELETE', API + path, { token: bob.token })).status, 200, path)
      }
    },
    // What was deleted is gone from every path; bob himself, and his like of alice's post (her notification), stay.
    aliceSeesBob: expectAll(false, ['profile', 'profile by name', 'posts by user', 'their followers', 'search users', 'search all users', "in a third user's followers", 'notifications']),
    bobSeesAlice: expectAll(true),
  },
  {
    name: 'alice mutes bob',
    apply: async ({ server, alice, bob }) => void assert.is((await server.request('POST', `${API}/user/mute/${bob.id}`, { token: alice.token })).status, 200),
    // Muting is quiet and narrow: only the home feed and the story feed lose bob (hashtag pages, bookmarks and replies keep him).
    aliceSeesBob: expectAll(true, ['feed', 'story feed']),
    bobSeesAlice: expectAll(true),
  },
]

for (const c of cases) {
  test(`${c.name}: what each side sees`, async () => {
    const net = await network()
    try {
      const before = await sees(net, net.alice, net.bob, net.made.bob)
      assert.equal(before, expectAll(true), 'before: everything is visible')
      await c.apply(net)
      assert.equal(await sees(net, net.alice, net.bob, net.made.bob), c.aliceSeesBob, 'alice sees of bob')
      if (Object.keys(c.bobSeesAlice).length > 0) assert.equal(await sees(net, net.bob, net.alice, net.made.alice), c.bobSeesAlice, 'bob sees of alice')
    } finally {
      await net.server.close()
    }
  })
}

test('a block removes the follows both ways with their counters and timelines, and the notifications between the two', async () => {
  const net = await network()
  const { server, alice, bob } = net
  try {
    const count = async (id: number) => (await server.request('GET', `${API}/user/profile/${id}`, { token: net.carol.token })).body.data
    assert.equal([(await count(alice.id)).followers_count, (await count(bob.id)).followers_count], [1, 1])
    const res = await server.request('POST', `${API}/user/block/${bob.id}`, { token: alice.token })
    assert.equal([res.status, res.body.status, res.body.message, res.body.data], [200, 'success', 'Blocked', { user_id: bob.id, is_blocked: true }])
    const a = await count(alice.id)
    const b = await count(bob.id)
    // Each still follows carol only.
    assert.equal([a.followers_count, a.following_count, b.followers_count, b.following_count], [0, 1, 0, 1])
    assert.not.ok((await timelineIdsOf(server, alice.id)).includes(net.made.bob.post))
    assert.not.ok((await timelineIdsOf(server, bob.id)).includes(net.made.alice.post))
    const between = await server.services.db.all(sql`select 1 from notifications where (user_id = ${alice.id} and actor_id = ${bob.id}) or (user_id = ${bob.id} and actor_id = ${alice.id})`)
    assert.is(between.length, 0)
    // Blocking again changes nothing; neither can follow, like, comment on or view the other's story.
    assert.is((await server.request('POST', `${API}/user/block/${bob.id}`, { token: alice.token })).status, 200)
    for (const [who, other] of [[alice, net.made.bob], [bob, net.made.alice]] as const) {
      const otherId = who === alice ? bob.id : alice.id
      assert.is((await server.request('POST', `${API}/user/follow/${otherId}`, { token: who.token })).status, 404)
      assert.is((await server.request('POST', `${API}/interactions/like/${other.post}`, { token: who.token })).status, 404)
      assert.is((await server.request('POST', `${API}/interactions/comment/${other.post}`, { token: who.token, body: { content: 'hey' } })).status, 404)
      assert.is((await server.request('GET', `${API}/stories/view/${other.story}`, { token: who.token })).status, 404)
    }
    assert.is((await count(alice.id)).followers_count, 0)
    // The blocked list; unblocking restores visibility but not the follows.
    const blocked = await server.request('GET', `${API}/user/blocked`, { token: alice.token })
    assert.equal(blocked.body.data.users.map((u: { id: number }) => u.id), [bob.id])
    assert.equal((await server.request('GET', `${API}/user/blocked`, { token: bob.token })).body.data.users, [])
    const unblocked = await server.request('DELETE', `${API}/user/unblock/${bob.id}`, { token: alice.token })
    assert.equal(unblocked.body.data, { user_id: bob.id, is_blocked: false })
    assert.is((await server.request('GET', `${API}/user/profile/${bob.id}`, { token: alice.token })).body.data.is_following, false)
    assert.is((await server.request('POST', `${API}/user/follow/${bob.id}`, { token: alice.token })).status, 200)
  } finally {
    await server.close()
  }
})

test('mute prunes the timeline, the fan-out skips the muter, and unmute backfills', async () => {
  const net = await network()
  const { server, alice, bob } = net
  try {
    await server.request('POST', `${API}/user/mute/${bob.id}`, { token: alice.token })
    assert.not.ok((await timelineIdsOf(server, alice.id)).includes(net.made.bob.post))
    const later = await post(server, bob.token, { content: 'while muted' })
    await server.services.fanout.drain()
    assert.not.ok((await timelineIdsOf(server, alice.id)).includes(later.id))
    const muted = await server.request('GET', `${API}/user/muted`, { token: alice.token })
    assert.equal(muted.body.data.users.map((u: { id: number }) => u.id), [bob.id])
    // Still following, still notified, still seeing bob everywhere but the feeds.
    assert.is((await server.request('GET', `${API}/user/profile/${bob.id}`, { token: alice.token })).body.data.is_following, true)
    const res = await server.request('DELETE', `${API}/user/unmute/${bob.id}`, { token: alice.token })
    assert.equal(res.body.data, { user_id: bob.id, is_muted: false })
    const timeline = await timelineIdsOf(server, alice.id)
    assert.ok(timeline.includes(net.made.bob.post) && timeline.includes(later.id))
    const feed = (await server.request('GET', `${API}/posts/feed`, { token: alice.token })).body.data.posts.map((p: { id: number }) => p.id)
    assert.ok(feed.includes(later.id))
  } finally {
    await server.close()
  }
})

test('a pending post of a muted or suspended author stays out of the feed until fanned out, and after', async () => {
  const net = await network()
  const { server, alice, bob } = net
  try {
    await server.request('POST', `${API}/user/mute/${bob.id}`, { token: alice.token })
    // Not drained: the feed reads it as pending.
    const pending = await post(server, bob.token, { content: 'pending while muted' })
    const feedIds = async () => (await server.request('GET', `${API}/posts/feed`, { token: alice.token })).body.data.posts.map((p: { id: number }) => p.id)
    assert.not.ok((await feedIds()).includes(pending.id))
    await server.request('DELETE', `${API}/user/unmute/${bob.id}`, { token: alice.token })
    assert.ok((await feedIds()).includes(pending.id))
    await server.services.db.run(sql`update users set suspended_at = 1 where id = ${bob.id}`)
    assert.not.ok((await feedIds()).includes(pending.id))
    assert.not.ok((await feedIds()).includes(net.made.bob.post))
    await server.services.fanout.drain()
    assert.not.ok((await feedIds()).includes(pending.id))
    await server.services.db.run(sql`update users set suspended_at = null where id = ${bob.id}`)
    assert.ok((await feedIds()).includes(pending.id))
  } finally {
    await server.close()
  }
})

test('block, unblock, mute and unmute: 401 without a token, 400 for oneself or a bad id, 404 for nobody', async () => {
  const server = await startTestServer()
  try {
    const alice = await registerUser(server)
    for (const [method, verb] of [['POST', 'block'], ['DELETE', 'unblock'], ['POST', 'mute'], ['DELETE', 'unmute']] as const) {
      assert.is((await server.request(method, `${API}/user/${verb}/1`)).status, 401, verb)
      const self = await server.request(method, `${API}/user/${verb}/${alice.id}`, { token: alice.token })
      assert.is(self.status, 400, verb)
      assert.match(self.body.message, /yourself/)
      assert.is((await server.request(method, `${API}/user/${verb}/999999`, { token: alice.token })).status, 404, verb)
      assert.is((await server.request(method, `${API}/user/${verb}/%20`, { token: alice.token })).status, 400, verb)
    }
    for (const list of ['blocked', 'muted']) {
      assert.is((await server.request('GET', `${API}/user/${list}`)).status, 401)
      assert.is((await server.request('GET', `${API}/user/${list}?page=0`, { token: alice.token })).status, 400)
    }
  } finally {
    await server.close()
  }
})

test('a suspension marks the notifications the account caused read, so the unread count agrees with the list; unsuspending shows them again', async () => {
  const net = await network()
  const { server, alice, bob } = net
  try {
    const unread = async () => (await server.request('GET', `${API}/notifications/count`, { token: alice.token })).body.data.count
    const listed = async () => (await server.request('GET', `${API}/notifications/list?limit=50`, { token: alice.token })).body.data.notifications as Array<{ actor_id: number }>
    const fromBob = (await listed()).filter((n) => n.actor_id === bob.id).length
    assert.ok(fromBob > 0)
    const before = await unread()
    await suspendUser(server.services, bob.id, { moderator: 'test', note: '' }, new Date())
    assert.is(await unread(), before - fromBob)
    assert.is((await listed()).filter((n) => n.actor_id === bob.id).length, 0)
    await unsuspendUser(server.services, bob.id, { moderator: 'test', note: '' }, new Date())
    assert.is((await listed()).filter((n) => n.actor_id === bob.id).length, fromBob)
  } finally {
    await server.close()
  }
})

test.run()
