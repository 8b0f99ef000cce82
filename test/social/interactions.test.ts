import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { notificationsOf, post, seedUpload } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

test('like and unlike are idempotent; the counter and user_liked are right for each caller', async () => {
  const author = await registerUser(server)
  const bob = await registerUser(server)
  const carol = await registerUser(server)
  const p = await post(server, author.token, { content: 'like me' })

  const liked = await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
  assert.is(liked.status, 200)
  assert.equal(liked.body.data, { post_id: p.id, likes_count: 1, user_liked: true })
  const twice = await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
  assert.equal(twice.body.data, { post_id: p.id, likes_count: 1, user_liked: true })
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: carol.token })

  const asBob = await server.request('GET', `/api/mobile/posts/detail/${p.id}`, { token: bob.token })
  assert.is(asBob.body.data.post.likes_count, 2)
  assert.is(asBob.body.data.post.user_liked, true)
  const asAuthor = await server.request('GET', `/api/mobile/posts/user/${author.id}`, { token: author.token })
  assert.is(asAuthor.body.data.posts[0].user_liked, false)
  const anonymous = await server.request('GET', `/api/mobile/posts/explore`)
  assert.ok(anonymous.body.data.posts.every((x: any) => x.user_liked === false))

  const unliked = await server.request('DELETE', `/api/mobile/interactions/unlike/${p.id}`, { token: bob.token })
  assert.equal(unliked.body.data, { post_id: p.id, likes_count: 1, user_liked: false })
  const again = await server.request('DELETE', `/api/mobile/interactions/unlike/${p.id}`, { token: bob.token })
  assert.equal(again.body.data, { post_id: p.id, likes_count: 1, user_liked: false })
})

test('a like notifies the author once; liking your own post notifies nobody', async () => {
  const author = await registerUser(server)
  const bob = await registerUser(server)
  const p = await post(server, author.token, { content: 'notify' })
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: author.token })
  assert.equal(await notificationsOf(server, author.id), [{ type: 'like', actor_id: bob.id, post_id: p.id }])
})

test('like, unlike and comment: missing post 404, bad id 400, no token 401', async () => {
  const bob = await registerUser(server)
  assert.is((await server.request('POST', '/api/mobile/interactions/like/999999', { token: bob.token })).status, 404)
  assert.is((await server.request('DELETE', '/api/mobile/interactions/unlike/999999', { token: bob.token })).status, 404)
  assert.is((await server.request('POST', '/api/mobile/interactions/comment/999999', { token: bob.token, body: { content: 'x' } })).status, 404)
  assert.is((await server.request('POST', '/api/mobile/interactions/like/zero', { token: bob.token })).status, 400)
  assert.is((await server.request('POST', '/api/mobile/interactions/like/1')).status, 401)
  assert.is((await server.request('POST', '/api/mobile/interactions/comment/1', { body: { content: 'x' } })).status, 401)
})

test('comment: 201 with the Comment, counter kept, author notified, not yourself', async () => {
  const author = await registerUser(server)
  const bob = await registerUser(server)
  const p = await post(server, author.token, { content: 'talk' })
  const image = await seedUpload(server, bob.id, 'comments')
  const res = await server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: bob.token, body: { content: ' hello ', image } })
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  const c = res.body.data
  assert.is(c.content, 'hello')
  assert.is(c.image, image)
  assert.is(c.user_id, bob.id)
  assert.is(c.username, bob.username)
  assert.is(c.is_verified, false)
  assert.match(c.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  await server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: author.token, body: { content: 'thanks' } })
  const detail = await server.request('GET', `/api/mobile/posts/detail/${p.id}`)
  assert.is(detail.body.data.post.comments_count, 2)
  assert.equal(await notificationsOf(server, author.id), [{ type: 'comment', actor_id: bob.id, post_id: p.id }])
})

test('comment validates content (1 to 1,000 characters) and the image (own comments upload); nothing changes on 400', async () => {
  const author = await registerUser(server)
  const bob = await registerUser(server)
  const p = await post(server, author.token, { content: 'strict' })
  const authors = await seedUpload(server, author.id, 'comments')
  const postKind = await seedUpload(server, bob.id, 'posts')
  const bad = [{}, { content: '' }, { content: '   ' }, { content: 'x'.repeat(1001) }, { content: 'ok', image: authors }, { content: 'ok', image: postKind }, { content: 5 }]
  for (const body of bad) {
    const res = await server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: bob.token, body })
    assert.is(res.status, 400, JSON.stringify(body).slice(0, 60))
  }
  const detail = await server.request('GET', `/api/mobile/posts/detail/${p.id}`)
  assert.is(detail.body.data.post.comments_count, 0)
  assert.is(detail.body.data.comments.length, 0)
  assert.is((await notificationsOf(server, author.id)).length, 0)
  const max = await server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: bob.token, body: { content: 'x'.repeat(1000) } })
  assert.is(max.status, 201)
})

test.run()
