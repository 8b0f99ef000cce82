/**
 * Carousels with alt text: ten uploads (nine images and a video) made into one post with alt text,
 * through every answer that shows a post, an edit of the alt text, bad carousels refused, the files
 * released with the post; and alt text on avatars.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { filesOnDisk, recordedVideo, solidImage, upload } from '../uploads/fixtures.js'
import { counterDrift } from './counters.js'
import { followUser } from './helpers.js'

const API = '/api/mobile'

let server: TestServer
let ann: RegisteredUser, bob: RegisteredUser
test.before(async () => {
  server = await startTestServer()
  ;[ann, bob] = await Promise.all([registerUser(server, 'ann_c'), registerUser(server, 'bob_c')])
  await followUser(server, bob.token, ann.id)
})
test.after(() => server.close())

interface Uploaded {
  path: string
  width: number
  height: number
  blurhash: string
  poster_path?: string
}

async function send(who: RegisteredUser, bytes: Buffer, name: string, type: string): Promise<Uploaded> {
  const res = await upload(server, 'post', who.token, bytes, name, type)
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data
}

/** Every answer that shows ann's post `id` to bob, by name. */
async function everyList(id: number, word: string) {
  const get = (path: string) => server.request('GET', API + path, { token: bob.token }).then((res) => res.body.data)
  const find = (posts: Array<{ id: number }>) => posts.find((p) => p.id === id)
  return {
    detail: (await get(`/posts/detail/${id}`)).post,
    feed: find((await get('/posts/feed?limit=50')).posts),
    explore: find((await get('/posts/explore?limit=50')).posts),
    'posts by user': find((await get(`/posts/user/${ann.id}`)).posts),
    search: find((await get(`/search/posts?q=${word}`)).posts),
    'search all': find((await get(`/search/all?q=${word}`)).posts),
    bookmarks: find((await get('/posts/bookmarks')).posts),
    hashtag: find((await get(`/posts/hashtag/${word}`)).posts),
  } as Record<string, { image: string; media: unknown[]; edited_at: string | null } | undefined>
}

test('a carousel of nine images and a video, with alt text, round-trips through upload, create, edit and every list', async () => {
  const images = await Promise.all(Array.from({ length: 9 }, async (_, i) => send(ann, await solidImage(40 + i, 30 + i, 'png'), `p${i}.png`, 'image/png')))
  const video = await send(ann, await recordedVideo('mp4'), 'clip.mp4', 'video/mp4')
  assert.type(video.poster_path, 'string')
  const uploads = [...images.slice(0, 4), video, ...images.slice(4)]
  const alt = (i: number) => `item ${i}: ${'é'.repeat(i)} described`
  const res = await server.request('POST', `${API}/posts/create`, {
    token: ann.token,
    body: { content: 'zqcarousel ten things #zqcarousel', media: uploads.map((u, i) => ({ path: u.path, alt: alt(i) })) },
  })
  assert.is(res.status, 201, JSON.stringify(res.body))
  const expected = uploads.map((u, i) => ({
    path: u.path,
    alt: alt(i),
    type: u === video ? 'video' : 'image',
    width: u.width,
    height: u.height,
    blurhash: u.blurhash,
    poster_url: u === video ? video.poster_path : null,
  }))
  const created = res.body.data
  assert.equal(created.media, expected)
  assert.is(created.image, uploads[0].path, 'image is the first item, for clients of the spec')
  assert.equal([created.image_width, created.image_height], [uploads[0].width, uploads[0].height])
  await server.services.fanout.drain()
  assert.is((await server.request('POST', `${API}/posts/${created.id}/bookmark`, { token: bob.token })).status, 200)
  for (const [where, seen] of Object.entries(await everyList(created.id, 'zqcarousel'))) {
    assert.ok(seen, `${where} shows the post`)
    assert.equal(seen!.media, expected, where)
  }
  // The post carries what each upload recorded, copied when it was written: every list answers it
  // from the post's row, without looking the uploads up (their rows never change after an upload;
  // changed here only to tell the two apart).
  await server.services.db.run(sql`update uploads set width = 1, height = 1, blurhash = null where user_id = ${ann.id}`)
  for (const [where, seen] of Object.entries(await everyList(created.id, 'zqcarousel'))) assert.equal(seen!.media, expected, `${where}, from the post's own record`)

  // New alt text for item 4 (the video), the same uploads in the same order.
  const edited = expected.map((item, i) => ({ path: item.path, alt: i === 4 ? 'A test pattern, beeping' : item.alt }))
  const changed = await server.request('PUT', `${API}/posts/${created.id}`, { token: ann.token, body: { media: edited } })
  assert.is(changed.status, 200, JSON.stringify(changed.body))
  assert.type(changed.body.data.edited_at, 'string')
  const after = expected.map((item, i) => (i === 4 ? { ...item, alt: 'A test pattern, beeping' } : item))
  assert.equal(changed.body.data.media, after)
  for (const [where, seen] of Object.entries(await everyList(created.id, 'zqcarousel'))) assert.equal(seen!.media, after, where)
  // Another order, or another upload, is refused: only the alt text changes.
  for (const media of [[...edited].reverse(), edited.slice(1), edited.map((item, i) => (i === 0 ? { ...item, path: uploads[1].path } : item))]) {
    const refused = await server.request('PUT', `${API}/posts/${created.id}`, { token: ann.token, body: { media } })
    assert.is(refused.status, 400)
  }

  // Deleting the post releases all ten files (and the video's poster frame).
  const files = filesOnDisk(server.dataDir)
  assert.ok(uploads.every((u) => files.includes(u.path)) && files.includes(video.poster_path!))
  assert.is((await server.request('DELETE', `${API}/posts/${created.id}`, { token: ann.token })).status, 200)
  const left = filesOnDisk(server.dataDir)
  assert.ok(uploads.every((u) => !left.includes(u.path)) && !left.includes(video.poster_path!))
  assert.equal(await counterDrift(server), [])
})

test('a post made with `image` alone (a spec client) answers it as its one media item; alt text alone makes one too', async () => {
  const one = await send(ann, await solidImage(20, 20, 'jpeg'), 'one.jpg', 'image/jpeg')
  const plain = (await server.request('POST', `${API}/posts/create`, { token: ann.token, body: { content: 'plain', image: one.path } })).body.data
  assert.equal(plain.media, [{ path: one.path, alt: '', type: 'image', width: 20, height: 20, blurhash: one.blurhash, poster_url: null }])
  const described = (await server.request('POST', `${API}/posts/create`, { token: ann.token, body: { image: one.path, media: [{ path: one.path, alt: 'A grey square' }] } })).body.data
  assert.equal([described.image, described.media[0].alt], [one.path, 'A grey square'])
  const text = (await server.request('POST', `${API}/posts/create`, { token: ann.token, body: { content: 'words only' } })).body.data
  assert.equal([text.image, text.media], ['', []])
  // Adding alt text to the single image by an edit.
  const edited = await server.request('PUT', `${API}/posts/${plain.id}`, { token: ann.token, body: { media: [{ path: one.path, alt: 'Now described' }] } })
  assert.is(edited.body.data.media[0].alt, 'Now described')
})

test('bad carousels: eleven items, twice the same upload, an upload of someone else, an image that is not the first, alt too long, empty', async () => {
  const mine = await Promise.all(Array.from({ length: 11 }, async (_, i) => (await send(ann, await solidImage(10 + i, 10, 'png'), `m${i}.png`, 'image/png')).path))
  const bobs = (await send(bob, await solidImage(12, 12, 'png'), 'b.png', 'image/png')).path
  const create = (body: Record<string, unknown>) => server.request('POST', `${API}/posts/create`, { token: ann.token, body })
  const items = (paths: string[]) => paths.map((path) => ({ path, alt: '' }))
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ media: items(mine) }, /at most 10/],
    [{ media: items([mine[0], mine[0]]) }, /twice/],
    [{ media: items([mine[0], bobs]) }, /is not one of your uploads/],
    [{ image: mine[1], media: items([mine[0], mine[1]]) }, /first media item/],
    [{ media: [{ path: mine[0], alt: 'x'.repeat(1501) }] }, /at most 1500/],
    [{ media: [] }, /at least one/],
    [{ media: [{ path: 'uploads/avatars/AAAAAAAAAAAA.jpg', alt: '' }] }, /upload/],
    [{ media: 'uploads/posts/AAAAAAAAAAAA.jpg' }, /media/],
  ]
  const before = (await server.request('GET', `${API}/user/profile`, { token: ann.token })).body.data.posts_count
  for (const [body, message] of cases) {
    const res = await create(body)
    assert.is(res.status, 400, JSON.stringify(body).slice(0, 80))
    assert.match(res.body.message, message)
  }
  assert.is((await server.request('GET', `${API}/user/profile`, { token: ann.token })).body.data.posts_count, before, 'nothing was made')
  const ten = await create({ media: items(mine.slice(0, 10)), image: mine[0] })
  assert.equal([ten.status, ten.body.data.media.length], [201, 10])
})

test('alt text on avatars: set with the avatar or after it, shown on the profile and in lists, gone with a new picture', async () => {
  const noAvatar = await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar_alt: 'me' } })
  assert.equal([noAvatar.status, noAvatar.body.message], [400, 'avatar_alt describes an avatar: set one first'])
  const avatar = await upload(server, 'avatar', bob.token, await solidImage(64, 64, 'png'), 'me.png', 'image/png')
  const set = await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar_alt: '  Bob, smiling  ' } })
  assert.equal([set.status, set.body.data.avatar, set.body.data.avatar_alt], [200, avatar.body.data.path, 'Bob, smiling'])
  const followers = (await server.request('GET', `${API}/user/followers/${ann.id}`, { token: ann.token })).body.data.users
  assert.is(followers.find((u: { id: number }) => u.id === bob.id).avatar_alt, 'Bob, smiling')
  assert.is((await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar_alt: 'x'.repeat(1501) } })).status, 400)
  // A new picture: the old description goes.
  await upload(server, 'avatar', bob.token, await solidImage(64, 64, 'jpeg'), 'new.jpg', 'image/jpeg')
  assert.is((await server.request('GET', `${API}/user/profile`, { token: bob.token })).body.data.avatar_alt, '')
  const both = await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar: avatar.body.data.path, avatar_alt: 'Back to the first' } })
  assert.equal([both.body.data.avatar, both.body.data.avatar_alt], [avatar.body.data.path, 'Back to the first'])
  const removed = await server.request('PUT', `${API}/user/update`, { token: bob.token, body: { avatar: null } })
  assert.equal([removed.body.data.avatar, removed.body.data.avatar_alt], ['', ''])
})

test("alt text on a story's image or video: kept and shown with it; refused on a text story and past 1,500 characters", async () => {
  const picture = await upload(server, 'story', ann.token, await solidImage(90, 160, 'png'), 'story.png', 'image/png')
  assert.is(picture.status, 201, JSON.stringify(picture.body))
  const create = (body: Record<string, unknown>) => server.request('POST', `${API}/stories/create`, { token: ann.token, body })
  const made = await create({ content_type: 'image', media_url: picture.body.data.path, media_alt: '  A pier at low tide  ' })
  assert.is(made.status, 201, JSON.stringify(made.body))
  assert.is(made.body.data.media_alt, 'A pier at low tide')
  const viewed = await server.request('GET', `${API}/stories/view/${made.body.data.id}`, { token: bob.token })
  assert.is(viewed.body.data.media_alt, 'A pier at low tide')
  // None given: "" (a spec client's story), as for a text story.
  const plain = await create({ content_type: 'image', media_url: picture.body.data.path })
  assert.is(plain.body.data.media_alt, '')
  assert.is((await create({ content_type: 'text', text_content: 'hi' })).body.data.media_alt, '')
  const onText = await create({ content_type: 'text', text_content: 'hi', media_alt: 'words' })
  assert.equal([onText.status, onText.body.message], [400, 'media_alt describes the image or video of a story: a text story has none'])
  const tooLong = await create({ content_type: 'image', media_url: picture.body.data.path, media_alt: 'x'.repeat(1501) })
  assert.equal([tooLong.status, tooLong.body.message], [400, 'media_alt must be at most 1500 characters'])
})

test.run()
