/**
 * Fields a route cannot apply are a 400 naming the field and the route that can (or saying none
 * does), and change nothing; fields a route does not know are ignored, as apps of other versions
 * send them; the OpenAPI document says both.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'

let server: TestServer
let user: RegisteredUser
let other: RegisteredUser
test.before(async () => {
  server = await startTestServer()
  user = await registerUser(server)
  other = await registerUser(server)
})
test.after(async () => {
  await server.close()
})

const profileOf = async (who: RegisteredUser) => (await server.request('GET', '/api/mobile/user/profile', { token: who.token })).body.data

test('PUT /user/update: username, email, password and is_verified are 400s naming the field and the route that can (or none), and change nothing', async () => {
  const before = await profileOf(user)
  for (const [field, value, message] of [
    ['username', 'renamed_user', 'username cannot be changed: it is chosen at registration (POST /api/mobile/auth/register) and no route changes it'],
    ['email', 'new@example.com', 'email is changed with PUT /api/mobile/user/email (email, password), not here'],
    ['password', 'another password', 'password is changed with PUT /api/mobile/user/password (current_password, new_password), not here'],
    ['is_verified', true, "is_verified is set by the server's operator (plaza admin verify), not by the user"],
  ] as const) {
    const res = await server.request('PUT', '/api/mobile/user/update', { token: user.token, body: { bio: `with ${field}`, [field]: value } })
    assert.is(res.status, 400, field)
    assert.is(res.body.message, message)
  }
  assert.equal(await profileOf(user), before)
  // Through tRPC (the CLI's door) the same.
  const trpc = await server.request('POST', '/trpc/users.update', { token: user.token, body: { username: 'renamed_user' } })
  assert.is(trpc.status, 400)
  assert.match(JSON.stringify(trpc.body), /username cannot be changed/)
})

test('fields a route does not know are ignored: the update applies', async () => {
  const res = await server.request('PUT', '/api/mobile/user/update', { token: user.token, body: { bio: 'ignored fields beside me', theme_colour: '#fff', app_version: '9.1', followers_count: 1000 } })
  assert.is(res.status, 200)
  assert.is(res.body.data.bio, 'ignored fields beside me')
  assert.is(res.body.data.followers_count, 0)
})

test('an id the route does not take is a 400, and changes nothing', async () => {
  const before = await profileOf(user)
  const update = await server.request('PUT', '/api/mobile/user/update', { token: user.token, body: { user_id: other.id, bio: 'meant for someone else' } })
  assert.is(update.status, 400)
  assert.is(update.body.message, 'user_id cannot be applied by PUT /api/mobile/user/update: it acts for the signed-in caller, and no route takes user_id in its body')
  assert.equal(await profileOf(user), before)

  const post = await server.request('POST', '/api/mobile/posts/create', { token: user.token, body: { content: 'a post' } })
  const postId = post.body.data.id as number
  const edit = (body: Record<string, unknown>) => server.request('PUT', `/api/mobile/posts/${postId}`, { token: user.token, body })
  const byId = await edit({ id: postId + 1, content: 'edited' })
  assert.is(byId.status, 400)
  assert.is(byId.body.message, 'id cannot be applied by PUT /api/mobile/posts/{post_id}: it acts on what its path names ({post_id}), and no route takes id in its body')
  const otherPost = await edit({ post_id: postId + 1, content: 'edited' })
  assert.is(otherPost.status, 400)
  assert.is(otherPost.body.message, `post_id in the body (${postId + 1}) is not the one in the path (${postId}); PUT /api/mobile/posts/{post_id} acts on the path's`)
  const author = await server.request('POST', '/api/mobile/posts/create', { token: user.token, body: { content: 'as someone else', user_id: other.id } })
  assert.is(author.status, 400)
  assert.match(author.body.message, /^user_id cannot be applied by POST \/api\/mobile\/posts\/create/)
  const image = await edit({ content: 'edited', image: 'uploads/posts/AAAAAAAAAAAAAAAAAAAAAAAA.jpg' })
  assert.is(image.status, 400)
  assert.is(image.body.message, 'image cannot be changed: a post keeps its image; publish a new post (POST /api/mobile/posts/create) for another')
  const detail = await server.request('GET', `/api/mobile/posts/detail/${postId}`, { token: user.token })
  assert.is(detail.body.data.post.content, 'a post')

  // The path's own id repeated in the body is harmless, and so is an id the route takes (a report's target).
  const same = await edit({ post_id: postId, content: 'edited' })
  assert.is(same.status, 200)
  assert.is(same.body.data.content, 'edited')
  const report = await server.request('POST', '/api/mobile/reports', { token: other.token, body: { target_type: 'post', target_id: postId, reason: 'spam' } })
  assert.is(report.status, 201)
})

test("an id that belongs in the route's path says so", async () => {
  const res = await server.request('PUT', '/api/mobile/notifications/mark_read', { token: user.token, body: { notification_id: 3 } })
  assert.is(res.status, 400)
  assert.is(res.body.message, 'notification_id goes in the path, not the body: PUT /api/mobile/notifications/mark_read/{notification_id}')
  const follow = await server.request('POST', `/api/mobile/user/follow/${other.id}`, { token: user.token, body: { user_id: user.id } })
  assert.is(follow.status, 400)
  assert.match(follow.body.message, /^user_id in the body \(\d+\) is not the one in the path/)
  assert.is((await profileOf(other)).followers_count, 0)
})

test('the OpenAPI document says which fields are refused, and that others are ignored but for ids', async () => {
  const document = (await server.request('GET', '/api/openapi.json')).body
  const body = document.paths['/api/mobile/user/update'].put.requestBody.content['application/json'].schema
  for (const field of ['username', 'email', 'password', 'is_verified']) {
    assert.equal(body.properties[field].not, {}, field)
    assert.match(body.properties[field].description, new RegExp(`^Refused: ${field} `))
  }
  assert.is(body.additionalProperties, true)
  assert.match(body.description, /Fields not listed are ignored .*except ids/)
})

test.run()
