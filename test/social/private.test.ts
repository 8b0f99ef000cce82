/**
 * Private accounts and follow requests. The table walks every list and detail path as each of the
 * people around a private account (a stranger, one whose request is pending, an approved
 * follower, one the owner blocked, and the owner) and checks what each is shown; the other tests
 * follow a request through approval, denial, cancellation and the account turning public.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { counterDrift } from './counters.js'
import { followUser, notificationsOf, post } from './helpers.js'

const API = '/api/mobile'

type Role = 'stranger' | 'requester' | 'follower' | 'blocked' | 'owner'

/**
 * Olive's account is private. She has a public post and a followers-only one (both tagged and with
 * a word only they use), a public story, a comment under carol's public post, and a comment with a
 * reply under her public post; fred follows her (approved), rita has asked to, sam is a stranger,
 * and olive blocked bert. Everyone but olive saved her public post while she was public.
 */
async function network() {
  const server = await startTestServer()
  const [olive, fred, rita, sam, bert, carol] = await Promise.all(['olive_p', 'fred_p', 'rita_p', 'sam_p', 'bert_p', 'carol_p'].map((name) => registerUser(server, name)))
  const call = async (who: RegisteredUser, method: string, path: string, body?: unknown) => {
    const res = await server.request(method, API + path, { token: who.token, body })
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.data
  }
  // Everyone follows carol (so her post is in their feeds); fred follows olive while she is public.
  for (const who of [olive, fred, rita, sam, bert]) await followUser(server, who.token, carol.id)
  await followUser(server, fred.token, olive.id)
  const publicPost = await post(server, olive.token, { content: 'zqolive public #zqolivetag' })
  const followersPost = await post(server, olive.token, { content: 'zqolive followers only #zqolivetag', is_public: false })
  const story = await call(olive, 'POST', '/stories/create', { content_type: 'text', text_content: 'olive story', privacy_type: 'public' })
  const carolPost = await post(server, carol.token, { content: 'carol says hi' })
  const comment = await call(olive, 'POST', `/interactions/comment/${carolPost.id}`, { content: 'olive was here' })
  const thread = await call(fred, 'POST', `/interactions/comment/${publicPost.id}`, { content: 'nice' })
  await call(olive, 'POST', `/interactions/comment/${publicPost.id}`, { content: 'thanks', parent_id: thread.id })
  for (const who of [fred, rita, sam, bert]) await call(who, 'POST', `/posts/${publicPost.id}/bookmark`)
  const made = await call(olive, 'PUT', '/user/update', { is_private: true })
  assert.is(made.is_private, true)
  const requested = await server.request('POST', `${API}/user/follow/${olive.id}`, { token: rita.token })
  assert.equal([requested.status, requested.body.message, requested.body.data.is_following, requested.body.data.follow_requested], [200, 'Follow requested', false, true])
  await call(olive, 'POST', `/user/block/${bert.id}`)
  await server.services.fanout.drain()
  const roles: Record<Role, RegisteredUser> = { stranger: sam, requester: rita, follower: fred, blocked: bert, owner: olive }
  return { server, olive, carol, roles, publicPost: publicPost.id, followersPost: followersPost.id, story: story.id, carolPost: carolPost.id, comment: comment.id, thread: thread.id }
}

type Network = Awaited<ReturnType<typeof network>>

/** What `viewer` is shown of olive, path by path: true when shown (200, or in the list). */
async function sees(net: Network, viewer: RegisteredUser) {
  const { server, olive } = net
  const get = (path: string) => server.request('GET', API + path, { token: viewer.token })
  const status = async (path: string) => (await get(path)).status
  const ids = (list: Array<{ id: number }>) => list.map((item) => item.id)
  const profile = await get(`/user/profile/${olive.id}`)
  const feed = ids((await get('/posts/feed?limit=50')).body.data.posts)
  const explore = ids((await get('/posts/explore?limit=50')).body.data.posts)
  const search = ids((await get('/search/posts?q=zqolive')).body.data.posts)
  const detail = (await get(`/posts/detail/${net.carolPost}?limit=50`)).body.data
  const storyFeed = (await get('/stories/feed')).body.data as Array<{ user_id: number }>
  return {
    profile: profile.status,
    'profile says private': profile.body.data?.is_private ?? null,
    'follow requested': profile.body.data?.follow_requested ?? null,
    'posts by user': await status(`/posts/user/${olive.id}`),
    followers: await status(`/user/followers/${olive.id}`),
    following: await status(`/user/following/${olive.id}`),
    'public post detail': await status(`/posts/detail/${net.publicPost}`),
    'followers-only post detail': await status(`/posts/detail/${net.followersPost}`),
    'like the public post': (await server.request('POST', `${API}/interactions/like/${net.publicPost}`, { token: viewer.token })).status,
    feed: feed.includes(net.publicPost) && feed.includes(net.followersPost),
    explore: explore.includes(net.publicPost),
    'search posts': search.includes(net.publicPost),
    'followers-only post in search': search.includes(net.followersPost),
    'search users': ids((await get(`/search/users?q=${olive.username}`)).body.data.users).includes(olive.id),
    'story view': await status(`/stories/view/${net.story}`),
    'story feed': storyFeed.some((group) => group.user_id === olive.id),
    'her comment under a public post': ids(detail.comments).includes(net.comment),
    'hashtag page': ids((await get('/posts/hashtag/zqolivetag')).body.data.posts).includes(net.publicPost),
    'saved before she went private': ids((await get('/posts/bookmarks')).body.data.posts).includes(net.publicPost),
    'save the public post': (await server.request('POST', `${API}/posts/${net.publicPost}/bookmark`, { token: viewer.token })).status,
    'replies under her post': await status(`/comments/${net.thread}/replies`),
  }
}

const hidden = {
  profile: 200,
  'profile says private': true,
  'follow requested': false,
  'posts by user': 403,
  followers: 403,
  following: 403,
  'public post detail': 404,
  'followers-only post detail': 404,
  'like the public post': 404,
  feed: false,
  explore: false,
  'search posts': false,
  'followers-only post in search': false,
  'search users': true,
  'story view': 404,
  'story feed': false,
  'her comment under a public post': true,
  'hashtag page': false,
  'saved before she went private': false,
  'save the public post': 404,
  'replies under her post': 404,
}
const shown = {
  ...hidden,
  'posts by user': 200,
  followers: 200,
  following: 200,
  'public post detail': 200,
  'followers-only post detail': 200,
  'like the public post': 200,
  feed: true,
  // Explore is for finding accounts: a private one's posts are not in it, for anyone.
  explore: false,
  'search posts': true,
  'story view': 200,
  'story feed': true,
  'hashtag page': true,
  'saved before she went private': true,
  'save the public post': 200,
  'replies under her post': 200,
}

const expected: Record<Role, Record<string, unknown>> = {
  stranger: hidden,
  requester: { ...hidden, 'follow requested': true },
  follower: shown,
  // She never saved it: her list is empty either way.
  owner: { ...shown, 'saved before she went private': false },
  // A block hides the account as if it did not exist (safety.md), private or not.
  blocked: {
    ...hidden,
    profile: 404,
    'profile says private': null,
    'follow requested': null,
    'posts by user': 404,
    followers: 404,
    following: 404,
    'search users': false,
    'her comment under a public post': false,
  },
}

let net: Network
test.before(async () => {
  net = await network()
})
test.after(async () => {
  await net.server.close()
})

for (const role of Object.keys(expected) as Role[]) {
  test(`what the ${role} of a private account is shown`, async () => {
    assert.equal(await sees(net, net.roles[role]), expected[role])
  })
}

test('a tag used only by a private account is in no hashtag search; its counts agree with the rows', async () => {
  const found = await net.server.request('GET', `${API}/search/hashtags?q=zqolivetag`)
  assert.equal(found.body.data.hashtags, [])
  assert.equal(await counterDrift(net.server), [])
})

test('the owner lists the requests; approving makes the follow (counters, a follow notification) and takes the request and its notification away', async () => {
  const server = await startTestServer()
  try {
    const [olive, rita, sam] = await Promise.all(['olive_q', 'rita_q', 'sam_q'].map((name) => registerUser(server, name)))
    await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: true } })
    for (const who of [rita, sam]) await server.request('POST', `${API}/user/follow/${olive.username}`, { token: who.token })
    // Asking again changes nothing.
    await server.request('POST', `${API}/user/follow/${olive.id}`, { token: rita.token })
    assert.equal((await notificationsOf(server, olive.id)).map((n) => [n.type, n.actor_id]), [['follow_request', rita.id], ['follow_request', sam.id]])
    const list = await server.request('GET', `${API}/user/follow-requests`, { token: olive.token })
    assert.equal(list.body.data.users.map((u: { id: number; is_private: boolean }) => u.id), [sam.id, rita.id], 'newest first')
    assert.is(list.body.data.has_more, false)
    // Only the owner's list: rita has none.
    assert.equal((await server.request('GET', `${API}/user/follow-requests`, { token: rita.token })).body.data.users, [])
    const approved = await server.request('POST', `${API}/user/follow-requests/${rita.id}/approve`, { token: olive.token })
    assert.equal([approved.status, approved.body.message, approved.body.data], [200, 'Follow request approved', { user_id: rita.id, state: 'approved' }])
    const profile = (await server.request('GET', `${API}/user/profile/${olive.id}`, { token: rita.token })).body.data
    assert.equal([profile.is_following, profile.follow_requested, profile.followers_count], [true, false, 1])
    assert.equal((await notificationsOf(server, olive.id)).map((n) => [n.type, n.actor_id]), [['follow_request', sam.id], ['follow', rita.id]])
    assert.is((await server.request('GET', `${API}/posts/user/${olive.id}`, { token: rita.token })).status, 200)
    // Approving again: the request is gone.
    const again = await server.request('POST', `${API}/user/follow-requests/${rita.id}/approve`, { token: olive.token })
    assert.equal([again.status, again.body.message], [404, 'Follow request not found'])
    const denied = await server.request('POST', `${API}/user/follow-requests/${sam.username}/deny`, { token: olive.token })
    assert.equal(denied.body.data, { user_id: sam.id, state: 'denied' })
    assert.equal((await notificationsOf(server, olive.id)).map((n) => n.type), ['follow'])
    const samSees = (await server.request('GET', `${API}/user/profile/${olive.id}`, { token: sam.token })).body.data
    assert.equal([samSees.is_following, samSees.follow_requested], [false, false])
    assert.equal((await server.request('GET', `${API}/user/follow-requests`, { token: olive.token })).body.data.users, [])
    assert.equal(await counterDrift(server), [])
  } finally {
    await server.close()
  }
})

test('unfollowing cancels a pending request; a block takes requests both ways; bad input is a 4xx', async () => {
  const server = await startTestServer()
  try {
    const [olive, rita, sam] = await Promise.all(['olive_r', 'rita_r', 'sam_r'].map((name) => registerUser(server, name)))
    await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: true } })
    await server.request('POST', `${API}/user/follow/${olive.id}`, { token: rita.token })
    const cancelled = await server.request('DELETE', `${API}/user/unfollow/${olive.id}`, { token: rita.token })
    assert.equal([cancelled.status, cancelled.body.data.follow_requested], [200, false])
    assert.equal(await notificationsOf(server, olive.id), [])
    await server.request('POST', `${API}/user/follow/${olive.id}`, { token: sam.token })
    await server.request('POST', `${API}/user/block/${olive.id}`, { token: sam.token })
    assert.equal((await server.request('GET', `${API}/user/follow-requests`, { token: olive.token })).body.data.users, [])
    assert.equal(await notificationsOf(server, olive.id), [])
    // 401 without a token; 400 for a bad id or paging; 404 for nobody.
    assert.is((await server.request('GET', `${API}/user/follow-requests`)).status, 401)
    assert.is((await server.request('POST', `${API}/user/follow-requests/${rita.id}/approve`)).status, 401)
    assert.is((await server.request('GET', `${API}/user/follow-requests?limit=0`, { token: olive.token })).status, 400)
    assert.is((await server.request('POST', `${API}/user/follow-requests/%20/deny`, { token: olive.token })).status, 400)
    assert.is((await server.request('POST', `${API}/user/follow-requests/999999/approve`, { token: olive.token })).status, 404)
    const bad = await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: 'yes' } })
    assert.equal([bad.status, bad.body.message], [400, 'is_private must be true or false'])
  } finally {
    await server.close()
  }
})

test('turning private off approves every pending request at once; turning it on keeps the followers', async () => {
  const server = await startTestServer()
  try {
    const [olive, fred, rita, sam] = await Promise.all(['olive_s', 'fred_s', 'rita_s', 'sam_s'].map((name) => registerUser(server, name)))
    await followUser(server, fred.token, olive.id)
    const tagged = await post(server, olive.token, { content: 'before #zqswitch' })
    const tagCount = async () => (await server.request('GET', `${API}/search/hashtags?q=zqswitch`)).body.data.hashtags[0]?.posts_count ?? 0
    assert.is(await tagCount(), 1)
    await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: true } })
    assert.is((await server.request('GET', `${API}/user/profile/${olive.id}`, { token: fred.token })).body.data.is_following, true, 'followers stay')
    assert.is((await server.request('GET', `${API}/posts/detail/${tagged.id}`, { token: fred.token })).status, 200)
    assert.is((await server.request('GET', `${API}/posts/detail/${tagged.id}`, { token: sam.token })).status, 404)
    // The search cache keeps hashtag answers for up to 5 s: ask for another prefix.
    assert.equal((await server.request('GET', `${API}/search/hashtags?q=zqswitc`)).body.data.hashtags, [])
    for (const who of [rita, sam]) await server.request('POST', `${API}/user/follow/${olive.id}`, { token: who.token })
    const opened = await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: false } })
    assert.equal([opened.body.data.is_private, opened.body.data.followers_count], [false, 3])
    for (const who of [rita, sam]) {
      const seen = (await server.request('GET', `${API}/user/profile/${olive.id}`, { token: who.token })).body.data
      assert.equal([seen.is_following, seen.follow_requested], [true, false])
    }
    assert.equal((await notificationsOf(server, olive.id)).map((n) => [n.type, n.actor_id]), [['follow', fred.id], ['follow', rita.id], ['follow', sam.id]])
    await server.services.fanout.drain()
    const feed = (await server.request('GET', `${API}/posts/feed`, { token: sam.token })).body.data.posts.map((p: { id: number }) => p.id)
    assert.ok(feed.includes(tagged.id))
    assert.equal((await server.request('GET', `${API}/search/hashtags?q=zqswi`)).body.data.hashtags, [{ tag: 'zqswitch', posts_count: 1 }])
    // Setting what is already set changes nothing.
    await server.request('PUT', `${API}/user/update`, { token: olive.token, body: { is_private: false } })
    assert.equal(await counterDrift(server), [])
  } finally {
    await server.close()
  }
})

test.run()
