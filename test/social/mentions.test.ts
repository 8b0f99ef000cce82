/**
 * Mentions: `@username` in posts, comments and story text is resolved to accounts, carried in every
 * answer as `mentions: [{user_id, username, start, end}]`, and told to the accounts named who may
 * see the item (not the blocked, not those who muted the author, at most ten per item); edits tell
 * only the newly named, and deleting the item takes its notifications away.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { extractMentions } from '../../src/server/domain/mentions.js'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, notificationsOf, post } from './helpers.js'

const API = '/api/mobile'

test('extractMentions: names after @, not glued to a word, trailing dots left out, offsets in UTF-16 units', () => {
  assert.equal(extractMentions('hi @ann and @Bob.Smith.'), [
    { name: 'ann', start: 3, end: 7 },
    { name: 'Bob.Smith', start: 12, end: 22 },
  ])
  assert.equal(extractMentions('mail ann@example.com, @ab, @@ann, #@ann, @' + 'x'.repeat(31)), [])
  assert.equal(extractMentions('😀 @ann'), [{ name: 'ann', start: 3, end: 7 }])
  assert.equal(extractMentions('(@ann)'), [{ name: 'ann', start: 1, end: 5 }])
})

let server: TestServer
let ann: RegisteredUser, bob: RegisteredUser, cat: RegisteredUser, dan: RegisteredUser, eve: RegisteredUser
test.before(async () => {
  server = await startTestServer()
  ;[ann, bob, cat, dan, eve] = await Promise.all(['ann_m', 'bob_m', 'cat_m', 'dan_m', 'eve_m'].map((name) => registerUser(server, name)))
})
test.after(() => server.close())

const mentionsOf = (server: TestServer, userId: number) => notificationsOf(server, userId).then((all) => all.filter((n) => n.type === 'mention'))

test('a post names accounts: mentions in every answer, and a notification to each who may see it', async () => {
  const text = `hello @${bob.username} and @${cat.username.toUpperCase()}, not @nobody_here nor mail ${dan.username}@example.com; again @${bob.username}`
  const created = await post(server, ann.token, { content: text })
  const expected = [
    { user_id: bob.id, username: bob.username, start: 6, end: 6 + 1 + bob.username.length },
    { user_id: cat.id, username: cat.username, start: text.indexOf('@' + cat.username.toUpperCase()), end: text.indexOf('@' + cat.username.toUpperCase()) + 1 + cat.username.length },
    { user_id: bob.id, username: bob.username, start: text.lastIndexOf('@'), end: text.length },
  ]
  assert.equal(created.mentions, expected)
  for (const m of expected) assert.is(text.slice(m.start, m.end).toLowerCase(), `@${m.username}`)
  await server.services.fanout.drain()
  await followUser(server, dan.token, ann.id)
  const get = (path: string, token = dan.token) => server.request('GET', API + path, { token }).then((res) => res.body.data)
  assert.equal((await get(`/posts/detail/${created.id}`)).post.mentions, expected)
  assert.equal((await get('/posts/feed')).posts.find((p: { id: number }) => p.id === created.id).mentions, expected)
  assert.equal((await get(`/posts/user/${ann.id}`)).posts[0].mentions, expected)
  assert.equal((await get('/search/posts?q=hello nobody_here')).posts[0].mentions, expected)
  // Each named account is told once, about the post.
  assert.equal(await mentionsOf(server, bob.id), [{ type: 'mention', actor_id: ann.id, post_id: created.id }])
  assert.equal(await mentionsOf(server, cat.id), [{ type: 'mention', actor_id: ann.id, post_id: created.id }])
  assert.equal(await mentionsOf(server, dan.id), [])
  const listed = (await get('/notifications/list', bob.token)).notifications[0]
  assert.equal([listed.type, listed.post_id, listed.post_content], ['mention', created.id, text])
})

test('not told: the author, the blocked either way, who muted the author, who may not see the post; at most ten', async () => {
  const server = await startTestServer()
  try {
    const [author, blocker, blockedOne, muter, outsider, privateFan] = await Promise.all(
      ['author_n', 'blocker_n', 'blocked_n', 'muter_n', 'outsider_n', 'privfan_n'].map((name) => registerUser(server, name)),
    )
    await server.request('POST', `${API}/user/block/${author.id}`, { token: blocker.token })
    await server.request('POST', `${API}/user/block/${blockedOne.id}`, { token: author.token })
    await server.request('POST', `${API}/user/mute/${author.id}`, { token: muter.token })
    await followUser(server, privateFan.token, author.id)
    const names = (...users: RegisteredUser[]) => users.map((u) => `@${u.username}`).join(' ')
    await post(server, author.token, { content: `public: ${names(author, blocker, blockedOne, muter, outsider, privateFan)}` })
    const followersOnly = await post(server, author.token, { content: `followers: ${names(outsider, privateFan)}`, is_public: false })
    for (const [who, count] of [[author, 0], [blocker, 0], [blockedOne, 0], [muter, 0], [outsider, 1], [privateFan, 2]] as const) {
      assert.is((await mentionsOf(server, who.id)).length, count, who.username)
    }
    assert.ok((await mentionsOf(server, privateFan.id)).some((n) => n.post_id === followersOnly.id))
    // A private account's public post: only its followers are told.
    await server.request('PUT', `${API}/user/update`, { token: author.token, body: { is_private: true } })
    await post(server, author.token, { content: `private account: ${names(outsider, privateFan)}` })
    assert.equal([(await mentionsOf(server, outsider.id)).length, (await mentionsOf(server, privateFan.id)).length], [1, 3])
    // Twelve named: the first ten are told.
    const crowd = await Promise.all(Array.from({ length: 12 }, (_, i) => registerUser(server, `crowd${i}_n`)))
    const loud = await registerUser(server, 'loud_n')
    const many = await post(server, loud.token, { content: names(...crowd) })
    assert.is((many.mentions as unknown[]).length, 12)
    const told = await Promise.all(crowd.map(async (u) => (await mentionsOf(server, u.id)).length))
    assert.equal(told, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
  } finally {
    await server.close()
  }
})

test('comments and stories mention too; the post author named in a comment on their post is told once, as a comment', async () => {
  const target = await post(server, eve.token, { content: 'comment on me' })
  const commented = await server.request('POST', `${API}/interactions/comment/${target.id}`, { token: ann.token, body: { content: `@${eve.username} @${dan.username} look` } })
  assert.is(commented.status, 201)
  assert.equal(commented.body.data.mentions.map((m: { user_id: number }) => m.user_id), [eve.id, dan.id])
  const eves = await notificationsOf(server, eve.id)
  assert.equal(eves.filter((n) => n.post_id === target.id).map((n) => n.type), ['comment'])
  assert.equal((await mentionsOf(server, dan.id)).filter((n) => n.post_id === target.id).length, 1)
  const detail = (await server.request('GET', `${API}/posts/detail/${target.id}`, { token: dan.token })).body.data
  assert.equal(detail.comments[0].mentions.map((m: { username: string }) => m.username), [eve.username, dan.username])

  const story = await server.request('POST', `${API}/stories/create`, { token: ann.token, body: { content_type: 'text', text_content: `hi @${cat.username}` } })
  assert.equal(story.body.data.mentions, [{ user_id: cat.id, username: cat.username, start: 3, end: 4 + cat.username.length }])
  const viewed = await server.request('GET', `${API}/stories/view/${story.body.data.id}`, { token: cat.token })
  assert.equal(viewed.body.data.mentions, story.body.data.mentions)
  const catList = (await server.request('GET', `${API}/notifications/list`, { token: cat.token })).body.data.notifications
  assert.equal([catList[0].type, catList[0].story_id, catList[0].post_id], ['mention', story.body.data.id, null])
  // A followers-only story: bob does not follow ann, so he is not told.
  await server.request('POST', `${API}/stories/create`, { token: ann.token, body: { content_type: 'text', text_content: `@${bob.username}`, privacy_type: 'followers' } })
  assert.is((await mentionsOf(server, bob.id)).length, 1, 'only the post of the first test')
})

test('an edit tells only the newly named; deleting the post, the comment or the story takes the mentions away', async () => {
  const server = await startTestServer()
  try {
    const [a, b, c, d] = await Promise.all(['a_e', 'b_e', 'c_e', 'd_e'].map((name) => registerUser(server, name)))
    const created = await post(server, a.token, { content: `@${b.username} first` })
    const edited = await server.request('PUT', `${API}/posts/${created.id}`, { token: a.token, body: { content: `@${b.username} and @${c.username} now` } })
    assert.equal(edited.body.data.mentions.map((m: { user_id: number }) => m.user_id), [b.id, c.id])
    assert.equal([(await mentionsOf(server, b.id)).length, (await mentionsOf(server, c.id)).length], [1, 1])
    // A change of visibility alone tells nobody.
    await server.request('PUT', `${API}/posts/${created.id}`, { token: a.token, body: { is_public: false } })
    assert.equal((await server.request('GET', `${API}/posts/detail/${created.id}`, { token: a.token })).body.data.post.mentions.length, 2)
    assert.equal([(await mentionsOf(server, b.id)).length, (await mentionsOf(server, c.id)).length], [1, 1])
    await server.request('PUT', `${API}/posts/${created.id}`, { token: a.token, body: { is_public: true } })

    const other = await post(server, d.token, { content: 'under here' })
    const comment = (await server.request('POST', `${API}/interactions/comment/${other.id}`, { token: a.token, body: { content: `@${c.username} see` } })).body.data
    const story = (await server.request('POST', `${API}/stories/create`, { token: a.token, body: { content_type: 'text', text_content: `@${c.username}` } })).body.data
    assert.is((await mentionsOf(server, c.id)).length, 3)
    assert.is((await server.request('DELETE', `${API}/interactions/comment/${comment.id}`, { token: a.token })).status, 200)
    assert.equal((await mentionsOf(server, c.id)).map((n) => n.post_id), [created.id, null])
    assert.is((await server.request('DELETE', `${API}/stories/${story.id}`, { token: a.token })).status, 200)
    assert.is((await server.request('DELETE', `${API}/posts/${created.id}`, { token: a.token })).status, 200)
    assert.equal([await mentionsOf(server, b.id), await mentionsOf(server, c.id)], [[], []])
  } finally {
    await server.close()
  }
})

test.run()
