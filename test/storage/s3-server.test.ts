/**
 * The server on an S3-compatible bucket (the loopback S3 server): uploads made through the social
 * API land in the bucket and nowhere on disk, `/uploads/...` is served from it (proxied with
 * ranges and revalidation, or by a redirect to a signed URL), and deleting a post, the expiry of
 * generated files and account erasure all delete the objects.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { storeGenerated, sweepGenerated } from '../../src/server/uploads/generated.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { recordedVideo, solidImage, upload } from '../uploads/fixtures.js'
import { startFakeS3, type FakeS3 } from './fake-s3.js'

const API = '/api/mobile'
const HOUR = 3600_000

let s3: FakeS3
let server: TestServer
const time = manualClock()

test.before(async () => {
  s3 = await startFakeS3()
  server = await startTestServer({ clock: time.clock, env: s3.env('plaza', { PLAZA_GENERATED_TTL: '1h' }) })
})
test.after(async () => {
  await server.close()
  await s3.close()
})

const objectOf = (key: string) => s3.objects.get(`plaza/${key}`)

async function uploadImage(token: string, route = 'post') {
  const res = await upload(server, route, token, await solidImage(40, 30, 'jpeg'))
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.path as string
}

test('an upload through the social API is stored in the bucket under the prefix, not on disk', async () => {
  const user = await registerUser(server)
  const stored = await uploadImage(user.token)
  const object = objectOf(stored)
  assert.ok(object, `${stored} is in the bucket`)
  assert.is(object!.contentType, 'image/jpeg')
  const meta = await sharp(object!.body).metadata()
  assert.equal([meta.format, meta.width, meta.height], ['jpeg', 40, 30])
  assert.not.ok(existsSync(path.join(server.dataDir, stored)))
  assert.not.ok(existsSync(path.join(server.dataDir, 'uploads')), 'nothing is written under the data directory')
  assert.ok(![...s3.objects.keys()].some((key) => key.includes('.staging')), 'no staged object is left')
})

test('proxy mode serves the bytes with caching headers, revalidation and byte ranges (206, 416)', async () => {
  const user = await registerUser(server)
  const stored = (await upload(server, 'story', user.token, await recordedVideo('mp4'), 'clip.mp4', 'video/mp4')).body.data.path as string
  const video = objectOf(stored)!.body
  const whole = await server.request('GET', '/' + stored)
  assert.is(whole.status, 200)
  assert.ok(Buffer.compare(whole.body, video) === 0)
  assert.is(whole.headers.get('content-type'), 'video/mp4')
  assert.is(whole.headers.get('cache-control'), 'public, max-age=31536000, immutable')
  assert.is(whole.headers.get('accept-ranges'), 'bytes')
  const etag = whole.headers.get('etag')!
  assert.is((await server.request('GET', '/' + stored, { headers: { 'if-none-match': etag } })).status, 304)

  const part = await server.request('GET', '/' + stored, { headers: { range: 'bytes=4-11' } })
  assert.is(part.status, 206)
  assert.is(part.headers.get('content-range'), `bytes 4-11/${video.length}`)
  assert.is(part.body.toString('latin1'), 'ftypisom')
  const ranged = s3.requests.filter((request) => request.operation === 'GetObject' && request.key === `plaza/${stored}`)
  assert.ok(ranged.length >= 2, 'the bytes come from the bucket')
  const past = await server.request('GET', '/' + stored, { headers: { range: `bytes=${video.length + 5}-` } })
  assert.is(past.status, 416)
  assert.is(past.headers.get('content-range'), `bytes */${video.length}`)
  const head = await server.request('HEAD', '/' + stored)
  assert.is(Number(head.headers.get('content-length')), video.length)
})

test('redirect mode answers 302 to a short-lived signed URL that serves the file (ranges too)', async () => {
  const redirecting = await startTestServer({ env: s3.env('plaza', { PLAZA_STORAGE_SERVE: 'redirect', PLAZA_S3_PRESIGN_TTL: '120' }) })
  try {
    const user = await registerUser(redirecting)
    const res = await upload(redirecting, 'post', user.token, await solidImage(20, 10, 'png'), 'a.png', 'image/png')
    const stored = res.body.data.path as string
    const answer = await fetch(`${redirecting.url}/${stored}`, { redirect: 'manual' })
    assert.is(answer.status, 302)
    assert.is(answer.headers.get('cache-control'), 'private, max-age=60')
    const location = answer.headers.get('location')!
    assert.ok(location.startsWith(`${s3.url}/${s3.bucket}/plaza/${stored}?`), location)
    assert.match(location, /X-Amz-Expires=120/)
    assert.not.match(location, new RegExp(s3.secretAccessKey), 'the secret never leaves the server')

    const followed = await fetch(location)
    assert.is(followed.status, 200)
    assert.is(followed.headers.get('content-type'), 'image/png')
    const meta = await sharp(Buffer.from(await followed.arrayBuffer())).metadata()
    assert.equal([meta.format, meta.width, meta.height], ['png', 20, 10])
    const part = await fetch(location, { headers: { range: 'bytes=1-3' } })
    assert.is(part.status, 206)
    assert.is(await part.text(), 'PNG')

    // Only recorded files are signed: an unknown name is a 404 from Plaza, not a URL.
    const unknown = await fetch(`${redirecting.url}/uploads/posts/AAAAAAAAAAAAAAAAAAAAAAAA.png`, { redirect: 'manual' })
    assert.is(unknown.status, 404)
  } finally {
    await redirecting.close()
  }
})

test('deleting a post deletes its image from the bucket', async () => {
  const user = await registerUser(server)
  const image = await uploadImage(user.token)
  const created = await server.request('POST', `${API}/posts/create`, { token: user.token, body: { content: 'with a picture', image } })
  assert.is(created.status, 201, JSON.stringify(created.body))
  assert.ok(objectOf(image))
  const deleted = await server.request('DELETE', `${API}/posts/${created.body.data.id}`, { token: user.token })
  assert.is(deleted.status, 200, JSON.stringify(deleted.body))
  assert.not.ok(objectOf(image), 'the object is gone')
  assert.is((await server.request('GET', '/' + image)).status, 404)
})

test('generated files expire from the bucket: not served past expiry, deleted by the sweep', async () => {
  const file = await storeGenerated(server.services, {
    kind: 'codeimages',
    key: { snippet: 'expiring' },
    ext: 'png',
    mime: 'image/png',
    render: async () => ({ body: await solidImage(8, 8, 'png'), width: 8, height: 8 }),
  })
  assert.ok(objectOf(file.path))
  assert.is((await server.request('GET', '/' + file.path)).status, 200)
  time.advance(HOUR + 1)
  assert.is((await server.request('GET', '/' + file.path)).status, 404)
  const swept = await sweepGenerated(server.services)
  assert.ok(swept.expired >= 1)
  assert.not.ok(objectOf(file.path), 'the expired object is deleted')
})

test('generated files past the size cap are evicted from the bucket, closest to expiry first', async () => {
  const capped = await startTestServer({ clock: time.clock, env: s3.env('capped', { PLAZA_GENERATED_TTL: '1h', PLAZA_GENERATED_MAX_BYTES: '300' }) })
  try {
    const make = (name: string) =>
      storeGenerated(capped.services, { kind: 'codeimages', key: { name }, ext: 'png', mime: 'image/png', render: async () => ({ body: Buffer.alloc(120, name) }) })
    const first = await make('first')
    time.advance(1000)
    const second = await make('second')
    time.advance(1000)
    const third = await make('third')
    assert.not.ok(s3.objects.has(`capped/${first.path}`), 'the oldest went over the cap')
    assert.ok(s3.objects.has(`capped/${second.path}`))
    assert.ok(s3.objects.has(`capped/${third.path}`))
  } finally {
    await capped.close()
  }
})

test('account erasure deletes every file of the account from the bucket', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const avatar = await uploadImage(alice.token, 'avatar')
  const postImage = await uploadImage(alice.token)
  const unused = await uploadImage(alice.token)
  const bobImage = await uploadImage(bob.token)
  const created = await server.request('POST', `${API}/posts/create`, { token: alice.token, body: { content: 'mine', image: postImage } })
  assert.is(created.status, 201)
  for (const key of [avatar, postImage, unused, bobImage]) assert.ok(objectOf(key))

  const erased = await server.request('DELETE', `${API}/user/account`, { token: alice.token, body: { password: 'correct horse' } })
  assert.is(erased.status, 200, JSON.stringify(erased.body))
  for (const key of [avatar, postImage, unused]) assert.not.ok(objectOf(key), `${key} is gone`)
  assert.ok(objectOf(bobImage), "another account's file stays")
})

test('while the bucket fails, uploads and downloads answer 503 with a retry hint and nothing leaks; then they work again', async () => {
  const user = await registerUser(server)
  const stored = await uploadImage(user.token)
  s3.outage(true)
  try {
    const failed = await upload(server, 'post', user.token, await solidImage(12, 12, 'jpeg'))
    assert.is(failed.status, 503)
    assert.is(failed.headers.get('retry-after'), '5')
    assert.is(failed.body.message, 'File storage is unavailable right now; try again shortly')
    assert.not.match(JSON.stringify(failed.body), /plaza-test|ServiceUnavailable|127\.0\.0\.1/)
    const read = await server.request('GET', '/' + stored)
    assert.is(read.status, 503)
  } finally {
    s3.outage(false)
  }
  assert.is((await server.request('GET', '/' + stored)).status, 200)
  await uploadImage(user.token)
})

test.run()
