import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { followUser, post } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const get = (path: string, token?: string) => server.request('GET', `/api/mobile${path}`, { token })

test('users: username prefix and full-name words, case-insensitive, exact and prefix matches first', async () => {
  const ann = await registerUser(server, 'annabel_lee')
  const anna = await registerUser(server, 'Anna')
  const bob = await registerUser(server, 'bobby_t')
  await server.request('PUT', '/api/mobile/user/update', { token: bob.token, body: { full_name: 'Robert Annandale' } })
  const res = await get('/search/users?q=ANNA', ann.token)
  assert.is(res.status, 200)
  assert.equal(res.body.data.users.map((u: any) => u.username), ['Anna', 'annabel_lee', 'bobby_t'])
  assert.equal(Object.keys(res.body.data.users[0]).sort(), [
    'avatar', 'avatar_alt', 'avatar_blurhash', 'avatar_height', 'avatar_width', 'full_name', 'id', 'is_following', 'is_private', 'is_verified', 'username',
  ])
  await followUser(server, ann.token, anna.id)
  const again = await get('/search/users?q=anna', ann.token)
  assert.is(again.body.data.users[0].is_following, true)
  const anonymous = await get('/search/users?q=anna')
  assert.is(anonymous.body.data.users[0].is_following, false)
  const byWord = await get('/search/users?q=roBERT')
  assert.equal(byWord.body.data.users.map((u: any) => u.username), ['bobby_t'])
  // a renamed user is found by the new name only (the index follows updates)
  await server.request('PUT', '/api/mobile/user/update', { token: bob.token, body: { full_name: 'Zed' } })
  assert.equal((await get('/search/users?q=robert')).body.data.users, [])
})

test('posts: full text over public posts only, word prefixes, user_liked for the caller; /search/posts is offered', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  await followUser(server, bob.token, alice.id)
  const pub = await post(server, alice.token, { content: 'Morning Café with #espresso' })
  await post(server, alice.token, { content: 'secret espresso stash', is_public: false })
  await server.request('POST', `/api/mobile/interactions/like/${pub.id}`, { token: bob.token })
  const res = await get('/search/posts?q=espress', bob.token)
  assert.is(res.status, 200)
  assert.equal(res.body.data.posts.map((p: any) => p.id), [pub.id])
  assert.is(res.body.data.posts[0].user_liked, true)
  assert.is(res.body.data.posts[0].likes_count, 1)
  // diacritics and case don't matter; all words must match
  assert.equal((await get('/search/posts?q=cafe%20morning')).body.data.posts.map((p: any) => p.id), [pub.id])
  assert.equal((await get('/search/posts?q=cafe%20evening')).body.data.posts, [])
  // FTS syntax in the query is plain text, never an error
  for (const q of ['"unbalanced', 'a OR', 'NEAR(x', '*star', '-- ;', '!!']) {
    const r = await get(`/search/posts?q=${encodeURIComponent(q)}`)
    assert.is(r.status, 200, q)
  }
})

test('hashtags: prefix (with or without #), public post counts, most used first', async () => {
  const alice = await registerUser(server)
  await post(server, alice.token, { content: '#sunset #sunrise' })
  await post(server, alice.token, { content: '#Sunset again' })
  await post(server, alice.token, { content: '#sunsecret', is_public: false })
  const res = await get('/search/hashtags?q=%23SUN')
  assert.is(res.status, 200)
  assert.equal(res.body.data.hashtags, [
    { tag: 'sunset', posts_count: 2 },
    { tag: 'sunrise', posts_count: 1 },
  ])
  assert.equal((await get('/search/hashtags?q=suns')).body.data.hashtags, [{ tag: 'sunset', posts_count: 2 }])
})

test('all: the three lists together', async () => {
  const alice = await registerUser(server, 'galaxy_fan')
  await post(server, alice.token, { content: 'the #galaxy tonight' })
  const res = await get('/search/all?q=galax')
  assert.is(res.status, 200)
  assert.equal(Object.keys(res.body.data).sort(), ['hashtags', 'posts', 'users'])
  assert.equal(res.body.data.users.map((u: any) => u.username), ['galaxy_fan'])
  assert.is(res.body.data.posts.length, 1)
  assert.equal(res.body.data.hashtags, [{ tag: 'galaxy', posts_count: 1 }])
})

test('q under 2 characters is 400; limit defaults to 10 and is clamped to 50; bad limit 400; bad token 401', async () => {
  const alice = await registerUser(server, 'limit_tester')
  for (let i = 0; i < 55; i++) await post(server, alice.token, { content: `limitword number ${i}` })
  for (const path of ['/search/all', '/search/users', '/search/posts', '/search/hashtags']) {
    assert.is((await get(`${path}?q=a`)).status, 400, path)
    assert.is((await get(`${path}?q=%20a%20`)).status, 400, path)
    assert.is((await get(path)).status, 400, path)
    assert.is((await get(`${path}?q=ab&limit=0`)).status, 400, path)
    assert.is((await get(`${path}?q=ab&limit=x`)).status, 400, path)
  }
  assert.is((await get('/search/posts?q=limitword')).body.data.posts.length, 10)
  assert.is((await get('/search/posts?q=limitword&limit=3')).body.data.posts.length, 3)
  assert.is((await get('/search/posts?q=limitword&limit=500')).body.data.posts.length, 50)
  assert.is((await server.request('GET', '/api/mobile/search/all?q=ab', { token: 'bogus' })).status, 401)
})

test.run()
