import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { followUser, post, seedUpload } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

test('profile has live counts and is_following for the caller', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  await post(server, alice.token, { content: 'one' })
  await post(server, alice.token, { content: 'two', is_public: false })
  await followUser(server, bob.token, alice.id)

  const seen = await server.request('GET', `/api/mobile/user/profile/${alice.id}`, { token: bob.token })
  assert.is(seen.status, 200)
  assert.equal(
    { ...seen.body.data },
    {
      id: alice.id,
      username: alice.username,
      full_name: `Name ${alice.username}`,
      bio: '',
      avatar: '',
      avatar_width: null,
      avatar_height: null,
      avatar_blurhash: null,
      avatar_alt: '',
      is_verified: false,
      followers_count: 1,
      following_count: 0,
      posts_count: 2,
      active_stories_count: 0,
      is_following: true,
      is_private: false,
      follow_requested: false,
    },
  )
  const own = await server.request('GET', '/api/mobile/user/profile', { token: bob.token })
  assert.is(own.body.data.following_count, 1)
  assert.is(own.body.data.is_following, false)
  const byName = await server.request('GET', `/api/mobile/user/profile/${alice.username.toUpperCase()}`, { token: bob.token })
  assert.is(byName.body.data.id, alice.id)
})

test('profile of a missing user is 404; without a token 401', async () => {
  const alice = await registerUser(server)
  assert.is((await server.request('GET', '/api/mobile/user/profile/999999', { token: alice.token })).status, 404)
  assert.is((await server.request('GET', `/api/mobile/user/profile/${alice.id}`)).status, 401)
})

test('update changes only the fields sent and returns the profile', async () => {
  const alice = await registerUser(server)
  const res = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { bio: '  hello there  ' } })
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  assert.is(res.body.data.bio, 'hello there')
  assert.is(res.body.data.full_name, `Name ${alice.username}`)
  const again = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { full_name: 'Alice A.' } })
  assert.is(again.body.data.full_name, 'Alice A.')
  assert.is(again.body.data.bio, 'hello there')
})

test('update enforces the text limits and changes nothing on a 400', async () => {
  const alice = await registerUser(server)
  const bio = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { bio: 'x'.repeat(501), full_name: 'New' } })
  assert.is(bio.status, 400)
  assert.is(bio.body.status, 'error')
  assert.is(bio.body.data, null)
  assert.match(bio.body.message, /bio/)
  const name = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { full_name: 'x'.repeat(101) } })
  assert.is(name.status, 400)
  const ok = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { bio: 'x'.repeat(500), full_name: 'x'.repeat(100) } })
  assert.is(ok.status, 200)
  const profile = await server.request('GET', '/api/mobile/user/profile', { token: alice.token })
  assert.is(profile.body.data.bio.length, 500)
})

test('avatar must be an own upload of kind avatars; empty removes it', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const mine = await seedUpload(server, alice.id, 'avatars')
  const bobs = await seedUpload(server, bob.id, 'avatars')
  const postImage = await seedUpload(server, alice.id, 'posts')

  const set = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { avatar: mine } })
  assert.is(set.status, 200)
  assert.is(set.body.data.avatar, mine)

  for (const avatar of [bobs, postImage, '../../etc/passwd', 'uploads/avatars/nope.jpg', 42]) {
    const res = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { avatar } })
    assert.is(res.status, 400, `avatar ${avatar}`)
  }
  const still = await server.request('GET', '/api/mobile/user/profile', { token: alice.token })
  assert.is(still.body.data.avatar, mine)

  const cleared = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { avatar: '' } })
  assert.is(cleared.body.data.avatar, '')
})

test('is_verified cannot be set through the API (only by plaza admin verify): a 400 saying so; a count sent along is ignored', async () => {
  const alice = await registerUser(server)
  const refused = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { is_verified: true, followers_count: 99 } })
  assert.is(refused.status, 400)
  assert.is(refused.body.message, "is_verified is set by the server's operator (plaza admin verify), not by the user")
  const res = await server.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { bio: 'hi', followers_count: 99 } })
  assert.is(res.status, 200)
  assert.is(res.body.data.is_verified, false)
  assert.is(res.body.data.followers_count, 0)
})

test('update needs a token', async () => {
  const res = await server.request('PUT', '/api/mobile/user/update', { body: { bio: 'x' } })
  assert.is(res.status, 401)
})

test.run()
