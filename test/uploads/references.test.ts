/** Uploads are referenced by posts, comments, stories and avatars; only real, own uploads of the right kind, and they are served. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { jpegWithGps, solidImage, upload } from './fixtures.js'

const API = '/api/mobile'
let server: TestServer
let alice: Awaited<ReturnType<typeof registerUser>>
let bob: Awaited<ReturnType<typeof registerUser>>

test.before(async () => {
  server = await startTestServer()
  alice = await registerUser(server)
  bob = await registerUser(server)
})
test.after(async () => {
  await server.close()
})

test('a post and a comment carry their uploaded images, which are served', async () => {
  const image = (await upload(server, 'post', alice.token, await jpegWithGps())).body.data.path
  const post = await server.request('POST', `${API}/posts/create`, { token: alice.token, body: { content: 'sunset #beach', image } })
  assert.is(post.status, 201, JSON.stringify(post.body))
  assert.is(post.body.data.image, image)
  const served = await server.request('GET', '/' + post.body.data.image)
  assert.is(served.status, 200)
  assert.is(served.headers.get('content-type'), 'image/jpeg')

  const commentImage = (await upload(server, 'comment', bob.token, await solidImage(30, 30, 'png'), 'c.png', 'image/png')).body.data.path
  const comment = await server.request('POST', `${API}/interactions/comment/${post.body.data.id}`, { token: bob.token, body: { content: 'nice', image: commentImage } })
  assert.is(comment.status, 201, JSON.stringify(comment.body))
  assert.is(comment.body.data.image, commentImage)
  assert.is((await server.request('GET', '/' + commentImage)).status, 200)
})

test('someone else’s upload, an upload of another kind, or an invented path cannot be referenced', async () => {
  const alices = (await upload(server, 'post', alice.token, await solidImage(20, 20, 'jpeg'))).body.data.path
  const stolen = await server.request('POST', `${API}/posts/create`, { token: bob.token, body: { content: 'mine now', image: alices } })
  assert.is(stolen.status, 400)
  assert.match(stolen.body.message, /not one of your uploads/)

  const avatar = (await upload(server, 'avatar', alice.token, await solidImage(20, 20, 'jpeg'))).body.data.path
  const wrongKind = await server.request('POST', `${API}/posts/create`, { token: alice.token, body: { content: 'x', image: avatar } })
  assert.is(wrongKind.status, 400)

  const invented = await server.request('POST', `${API}/posts/create`, { token: alice.token, body: { content: 'x', image: 'uploads/posts/neverUploaded1234.jpg' } })
  assert.is(invented.status, 400)
})

test('media fields refuse paths that could leave the uploads folder', async () => {
  const attempts = [
    'uploads/posts/../../plaza.db',
    '../plaza.db',
    '/etc/passwd',
    'uploads/posts/%2e%2e%2fplaza.db',
    'uploads\\posts\\..\\..\\plaza.db',
    'https://evil.example/x.jpg',
    'uploads/posts/abcdefgh12345678.jpg/../../../plaza.db',
  ]
  for (const image of attempts) {
    const post = await server.request('POST', `${API}/posts/create`, { token: alice.token, body: { content: 'x', image } })
    assert.is(post.status, 400, `image ${image}`)
    const profile = await server.request('PUT', `${API}/user/update`, { token: alice.token, body: { avatar: image.replace('posts', 'avatars') } })
    assert.is(profile.status, 400, `avatar ${image}`)
    const story = await server.request('POST', `${API}/stories/create`, { token: alice.token, body: { content_type: 'image', media_url: image.replace('posts', 'stories') } })
    assert.is(story.status, 400, `media_url ${image}`)
  }
})

test('an earlier avatar upload can be set again through PUT /user/update, and is served', async () => {
  const first = (await upload(server, 'avatar', bob.token, await solidImage(100, 100, 'jpeg'))).body.data.path
  const second = (await upload(server, 'avatar', bob.token, await solidImage(80, 80, 'png'), 'b.png', 'image/png')).body.data.path
  assert.is((await server.request('GET', `${API}/user/profile`, { token: bob.token })).body.data.avatar, second)
  const back = await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar: first } })
  assert.is(back.status, 200, JSON.stringify(back.body))
  assert.is(back.body.data.avatar, first)
  assert.is((await server.request('GET', '/' + first)).status, 200)
})

test.run()
