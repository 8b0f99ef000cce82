import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { UPLOAD_PATH_PATTERN } from '../../src/shared/schemas/common.js'
import { assertOwnUpload } from '../../src/server/uploads/references.js'
import { saveUpload } from '../../src/server/uploads/pipeline.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import {
  animatedGif,
  fetchStored,
  filesOnDisk,
  form,
  jpegWithGps,
  recordedVideo,
  noisyImage,
  pngBomb,
  solidImage,
  upload,
} from './fixtures.js'

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

async function uploadRows(): Promise<number> {
  const [{ n }] = await server.services.db.all<{ n: number }>(sql`select count(*) as n from uploads`)
  return n
}

test('a JPEG with GPS EXIF and an orientation tag is stored upright with every piece of metadata gone', async () => {
  const original = await jpegWithGps(400, 200)
  const before = await sharp(original).metadata()
  assert.is(before.orientation, 6, 'the fixture carries an orientation tag')
  assert.ok(before.exif && before.xmp && before.hasProfile, 'the fixture carries EXIF, XMP and an ICC profile')
  assert.ok(original.includes('PlazaCam') && original.includes('XmpSecretAuthor'))

  const res = await upload(server, 'post', alice.token, original)
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  const { url, path, filename } = res.body.data
  assert.ok(UPLOAD_PATH_PATTERN.test(path), path)
  assert.ok(path.startsWith('uploads/posts/') && path.endsWith('.jpg'))
  assert.is(path, `uploads/posts/${filename}`)
  assert.is(url, `${server.url}/${path}`)
  assert.ok(filename.length - 4 >= 22, 'at least 128 random bits in the name')

  const { res: served, bytes, meta } = await fetchStored(server, path)
  assert.is(served.headers.get('content-type'), 'image/jpeg')
  assert.is(meta.format, 'jpeg')
  assert.is(meta.width, 200, 'rotated: the sideways 400×200 pixels are now upright')
  assert.is(meta.height, 400)
  assert.is(meta.orientation, undefined)
  assert.is(meta.exif, undefined)
  assert.is(meta.xmp, undefined)
  assert.is(meta.iptc, undefined)
  assert.is(meta.hasProfile, false)
  assert.not.ok(bytes.includes('PlazaCam') || bytes.includes('SecretPhone') || bytes.includes('XmpSecretAuthor'))
})

test('a 4000 px photo comes back at most 2048 px, keeping its aspect ratio', async () => {
  const res = await upload(server, 'post', alice.token, await noisyImage(4000, 3000))
  assert.is(res.status, 201)
  const { meta } = await fetchStored(server, res.body.data.path)
  assert.is(meta.width, 2048)
  assert.is(meta.height, 1536)
  const [row] = await server.services.db.all<{ width: number; height: number; mime: string; size: number }>(
    sql`select width, height, mime, size from uploads where path = ${res.body.data.path}`,
  )
  assert.equal({ width: row.width, height: row.height, mime: row.mime }, { width: 2048, height: 1536, mime: 'image/jpeg' })
})

test('small images are not enlarged', async () => {
  const res = await upload(server, 'comment', alice.token, await solidImage(120, 80, 'jpeg'))
  assert.is(res.status, 201)
  assert.ok(res.body.data.path.startsWith('uploads/comments/'))
  const { meta } = await fetchStored(server, res.body.data.path)
  assert.equal([meta.width, meta.height], [120, 80])
})

test('an avatar is cropped to a centred square of at most 512 px and becomes the caller’s avatar', async () => {
  const res = await upload(server, 'avatar', alice.token, await noisyImage(4000, 3000))
  assert.is(res.status, 201)
  const { path } = res.body.data
  assert.ok(path.startsWith('uploads/avatars/'))
  const { meta } = await fetchStored(server, path)
  assert.equal([meta.width, meta.height], [512, 512])

  const profile = await server.request('GET', '/api/mobile/user/profile', { token: alice.token })
  assert.is(profile.status, 200)
  assert.is(profile.body.data.avatar, path)
  const seenByBob = await server.request('GET', `/api/mobile/user/profile/${alice.id}`, { token: bob.token })
  assert.is(seenByBob.body.data.avatar, path)

  const small = await upload(server, 'avatar', alice.token, await jpegWithGps(300, 200))
  const smallMeta = (await fetchStored(server, small.body.data.path)).meta
  assert.equal([smallMeta.width, smallMeta.height], [200, 200], 'a small avatar becomes a square of its short side')
  assert.is(smallMeta.exif, undefined)
})

test('PNG stays PNG (transparency kept), WebP stays WebP', async () => {
  const png = await upload(server, 'post', alice.token, await solidImage(64, 64, 'png', true), 'a.png', 'image/png')
  assert.is(png.status, 201)
  assert.ok(png.body.data.path.endsWith('.png'))
  const pngMeta = (await fetchStored(server, png.body.data.path)).meta
  assert.is(pngMeta.format, 'png')
  assert.is(pngMeta.hasAlpha, true)

  const webp = await upload(server, 'story', alice.token, await solidImage(64, 48, 'webp'), 'a.webp', 'image/webp')
  assert.is(webp.status, 201)
  assert.ok(webp.body.data.path.startsWith('uploads/stories/') && webp.body.data.path.endsWith('.webp'))
  const { res, meta } = await fetchStored(server, webp.body.data.path)
  assert.is(res.headers.get('content-type'), 'image/webp')
  assert.is(meta.format, 'webp')
})

test('an animated GIF stays animated, with its frames and timing', async () => {
  const res = await upload(server, 'post', alice.token, await animatedGif(), 'dance.gif', 'image/gif')
  assert.is(res.status, 201)
  assert.ok(res.body.data.path.endsWith('.gif'))
  const { res: served, meta } = await fetchStored(server, res.body.data.path)
  assert.is(served.headers.get('content-type'), 'image/gif')
  assert.is(meta.format, 'gif')
  assert.is(meta.pages, 3)
  assert.equal(meta.delay, [120, 120, 120])
  assert.is(meta.width, 60)
  assert.is(meta.pageHeight, 40)
})

test('an animated GIF as avatar becomes a still square PNG', async () => {
  const res = await upload(server, 'avatar', bob.token, await animatedGif(), 'dance.gif', 'image/gif')
  assert.is(res.status, 201)
  assert.ok(res.body.data.path.endsWith('.png'))
  const { meta } = await fetchStored(server, res.body.data.path)
  assert.is(meta.pages, undefined)
  assert.equal([meta.width, meta.height], [40, 40])
})

test('a decompression bomb is refused from its header, without being decoded', async () => {
  const bomb = pngBomb(100_000, 100_000)
  assert.ok(bomb.length < 2000, 'the bomb is a tiny file')
  const rows = await uploadRows()
  const res = await upload(server, 'post', alice.token, bomb, 'bomb.png', 'image/png')
  assert.is(res.status, 400)
  assert.is(res.body.status, 'error')
  assert.match(res.body.message, /100000×100000 pixels/)
  assert.match(res.body.message, /50 megapixels/)
  assert.is(await uploadRows(), rows)
})

test('the type comes from the bytes: text named photo.jpg and declared image/jpeg is refused', async () => {
  const rows = await uploadRows()
  const files = filesOnDisk(server.dataDir)
  const res = await upload(server, 'post', alice.token, Buffer.from('definitely not a picture\n'.repeat(50)), 'photo.jpg', 'image/jpeg')
  assert.is(res.status, 400)
  assert.match(res.body.message, /Unsupported file type/)
  const pdf = await upload(server, 'post', alice.token, Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n'.repeat(20), 'latin1'), 'photo.png', 'image/png')
  assert.is(pdf.status, 400)
  assert.match(pdf.body.message, /application\/pdf/)
  // A JPEG's magic bytes followed by garbage sniffs as JPEG but cannot be decoded.
  const fake = await upload(server, 'post', alice.token, Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(5000, 1)]))
  assert.is(fake.status, 400)
  assert.match(fake.body.message, /could not be read as an image/)
  assert.is(await uploadRows(), rows)
  assert.equal(filesOnDisk(server.dataDir), files, 'nothing is left on disk')
})

test('a real JPEG uploaded with a misleading name and type is still accepted as JPEG', async () => {
  const res = await upload(server, 'post', alice.token, await solidImage(50, 50, 'jpeg'), 'notes.txt', 'text/plain')
  assert.is(res.status, 201)
  assert.ok(res.body.data.path.endsWith('.jpg'))
})

test('MP4 and WebM are accepted for stories and posts (a carousel item) and refused for comments and avatars', async () => {
  const mp4 = await recordedVideo('mp4')
  const story = await upload(server, 'story', alice.token, mp4, 'clip.mp4', 'video/mp4')
  assert.is(story.status, 201)
  assert.ok(story.body.data.path.startsWith('uploads/stories/') && story.body.data.path.endsWith('.mp4'))
  const served = await server.request('GET', '/' + story.body.data.path)
  assert.is(served.headers.get('content-type'), 'video/mp4')

  const webm = await upload(server, 'story', alice.token, await recordedVideo('webm'), 'clip.webm', 'video/webm')
  assert.is(webm.status, 201)
  assert.ok(webm.body.data.path.endsWith('.webm'))
  assert.is((await server.request('GET', '/' + webm.body.data.path)).headers.get('content-type'), 'video/webm')

  const post = await upload(server, 'post', alice.token, mp4, 'clip.mp4', 'video/mp4')
  assert.is(post.status, 201)
  assert.ok(post.body.data.path.startsWith('uploads/posts/') && post.body.data.path.endsWith('.mp4'))
  assert.ok(post.body.data.poster_path.startsWith('uploads/posts/'), 'its poster frame beside it')

  for (const route of ['comment', 'avatar']) {
    const res = await upload(server, route, alice.token, mp4, 'clip.mp4', 'video/mp4')
    assert.is(res.status, 400, route)
    assert.match(res.body.message, /video\/mp4/)
  }
})

test('no token is 401, a bad token is 401, and nothing is stored', async () => {
  const rows = await uploadRows()
  const image = await solidImage(10, 10, 'png')
  const none = await upload(server, 'post', undefined, image)
  assert.is(none.status, 401)
  assert.is(none.body.status, 'error')
  const bad = await upload(server, 'avatar', 'plz_not-a-real-token', image)
  assert.is(bad.status, 401)
  assert.is(await uploadRows(), rows)
})

test('a form without the file field, an empty file and a body that is not multipart are 400', async () => {
  const wrongField = await server.request('POST', '/api/mobile/upload/post', { token: alice.token, raw: form(await solidImage(10, 10, 'png'), 'a.png', 'image/png', 'image') })
  assert.is(wrongField.status, 400)
  assert.match(wrongField.body.message, /field "file"/)

  const onlyText = new FormData()
  onlyText.append('caption', 'hello')
  const noFile = await server.request('POST', '/api/mobile/upload/post', { token: alice.token, raw: onlyText })
  assert.is(noFile.status, 400)
  assert.match(noFile.body.message, /No file was sent/)

  const empty = await upload(server, 'post', alice.token, Buffer.alloc(0))
  assert.is(empty.status, 400)
  assert.match(empty.body.message, /empty/)

  const json = await server.request('POST', '/api/mobile/upload/post', { token: alice.token, body: { file: 'x' } })
  assert.is(json.status, 400)
  assert.match(json.body.message, /multipart/)

  const get = await server.request('GET', '/api/mobile/upload/post', { token: alice.token })
  assert.is(get.status, 405)
})

test('an upload is referenceable only by the user who made it', async () => {
  const res = await upload(server, 'post', alice.token, await solidImage(30, 30, 'jpeg'))
  await assertOwnUpload(server.services.db, alice.id, res.body.data.path)
  try {
    await assertOwnUpload(server.services.db, bob.id, res.body.data.path)
    assert.unreachable('bob may not reference alice’s upload')
  } catch (error) {
    assert.match(String((error as Error).message), /not one of your uploads/)
  }
})

test('saveUpload is callable directly (embedded CLI) with a Buffer and gives the same result shape', async () => {
  const result = await saveUpload(server.services, { userId: bob.id, kind: 'posts', source: await jpegWithGps(), origin: 'https://plaza.example' })
  assert.ok(result.url.startsWith('https://plaza.example/uploads/posts/'))
  assert.is(result.url, `https://plaza.example/${result.path}`)
  const { meta } = await fetchStored(server, result.path)
  assert.equal([meta.width, meta.height, meta.exif], [200, 400, undefined])
})

test('every stored file is recorded, and no temp file is left behind', async () => {
  const rows = await server.services.db.all<{ path: string }>(sql`select path from uploads order by path`)
  assert.equal(filesOnDisk(server.dataDir), rows.map((r) => r.path).sort())
})

test.run()
