import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { uploads } from '../../src/server/db/schema.js'
import { storeFile } from '../../src/server/uploads/pipeline.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { rawGet, recordedVideo, solidImage, upload } from './fixtures.js'

let server: TestServer
let user: Awaited<ReturnType<typeof registerUser>>
let imagePath: string

test.before(async () => {
  server = await startTestServer()
  user = await registerUser(server)
  imagePath = (await upload(server, 'post', user.token, await solidImage(40, 30, 'jpeg'))).body.data.path
})
test.after(async () => {
  await server.close()
})

async function record(relative: string, mime = 'image/jpeg') {
  await server.services.db.insert(uploads).values({ userId: user.id, kind: relative.split('/')[1] as 'posts', path: relative, mime, size: 1, createdAt: 0 })
}

test('a stored file is served with its type, immutable caching, ETag and Last-Modified', async () => {
  const res = await server.request('GET', '/' + imagePath)
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/jpeg')
  assert.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
  assert.is(res.headers.get('x-content-type-options'), 'nosniff')
  assert.ok(res.headers.get('etag'))
  assert.ok(!Number.isNaN(Date.parse(res.headers.get('last-modified')!)))
  assert.is(Number(res.headers.get('content-length')), res.body.length)
  const meta = await sharp(res.body).metadata()
  assert.equal([meta.format, meta.width, meta.height], ['jpeg', 40, 30])
})

test('revalidation answers 304 by ETag and by date; HEAD has the headers and no body', async () => {
  const first = await server.request('GET', '/' + imagePath)
  const etag = first.headers.get('etag')!
  const byTag = await server.request('GET', '/' + imagePath, { headers: { 'if-none-match': etag } })
  assert.is(byTag.status, 304)
  assert.is(byTag.headers.get('etag'), etag)
  const otherTag = await server.request('GET', '/' + imagePath, { headers: { 'if-none-match': '"nope"' } })
  assert.is(otherTag.status, 200)
  const byDate = await server.request('GET', '/' + imagePath, { headers: { 'if-modified-since': first.headers.get('last-modified')! } })
  assert.is(byDate.status, 304)
  const head = await server.request('HEAD', '/' + imagePath)
  assert.is(head.status, 200)
  assert.is(head.headers.get('content-type'), 'image/jpeg')
  assert.is(Number(head.headers.get('content-length')), first.body.length)
  assert.is(head.body.length, 0)
  const post = await server.request('POST', '/' + imagePath)
  assert.is(post.status, 405)
  assert.is(post.headers.get('allow'), 'GET, HEAD')
})

test('byte ranges are served for video seeking', async () => {
  const stored = (await upload(server, 'story', user.token, await recordedVideo('mp4'), 'clip.mp4', 'video/mp4')).body.data.path
  const video: Buffer = (await server.request('GET', '/' + stored)).body
  const part = await server.request('GET', '/' + stored, { headers: { range: 'bytes=4-11' } })
  assert.is(part.status, 206)
  assert.is(part.headers.get('content-range'), `bytes 4-11/${video.length}`)
  assert.is(part.headers.get('accept-ranges'), 'bytes')
  assert.is(part.body.toString('latin1'), 'ftypisom')
  const tail = await server.request('GET', '/' + stored, { headers: { range: 'bytes=-10' } })
  assert.is(tail.status, 206)
  assert.ok(Buffer.compare(tail.body, video.subarray(video.length - 10)) === 0)
  const past = await server.request('GET', '/' + stored, { headers: { range: `bytes=${video.length + 5}-` } })
  assert.is(past.status, 416)
  assert.is(past.headers.get('content-range'), `bytes */${video.length}`)
})

test('path traversal never leaves the uploads folder: the database and other files are 404', async () => {
  const name = imagePath.split('/')[2]
  const attempts = [
    '/uploads/../plaza.db',
    '/uploads/posts/../../plaza.db',
    '/uploads/%2e%2e/plaza.db',
    '/uploads/posts/%2e%2e/%2e%2e/plaza.db',
    '/uploads/posts/..%2f..%2fplaza.db',
    '/uploads/posts/%2E%2E%2F%2E%2E%2Fplaza.db',
    '/uploads/posts/..%5c..%5cplaza.db',
    '/uploads/posts\\..\\..\\plaza.db',
    '/uploads/..\\plaza.db',
    '/uploads//etc/passwd',
    '/uploads/%2fetc%2fpasswd',
    '/uploads/posts/%2fetc%2fpasswd',
    '/uploads/plaza.db',
    '/uploads/posts/plaza.db',
    `/uploads/posts/${name}/../../../plaza.db`,
    `/uploads/posts/${name}%00.jpg`,
    `/uploads/posts//${name}`,
    '/uploads',
    '/uploads/',
    '/uploads/posts/',
    '/plaza.db',
  ]
  for (const attempt of attempts) {
    const res = await rawGet(server, attempt)
    assert.ok(res.status === 404 || res.status === 400, `${attempt}: ${res.status}`)
    assert.not.ok(res.body.includes('SQLite format'), attempt)
    assert.not.ok(res.body.includes('root:'), attempt)
  }
})

test('a file placed in the uploads folder by hand, or a leftover temp file, is not served', async () => {
  const dir = path.join(server.dataDir, 'uploads', 'posts')
  writeFileSync(path.join(dir, 'handmadeFile123.jpg'), await solidImage(4, 4, 'jpeg'))
  writeFileSync(path.join(dir, '.tmp-0123456789abcdef'), 'partial')
  assert.is((await rawGet(server, '/uploads/posts/handmadeFile123.jpg')).status, 404)
  assert.is((await rawGet(server, '/uploads/posts/.tmp-0123456789abcdef')).status, 404)
})

test('a recorded name that is a symlink, or lies behind a symlinked folder, is not followed', async () => {
  const dir = path.join(server.dataDir, 'uploads', 'posts')
  symlinkSync(path.join(server.dataDir, 'plaza.db'), path.join(dir, 'linkToTheDatabase.jpg'))
  await record('uploads/posts/linkToTheDatabase.jpg')
  const link = await rawGet(server, '/uploads/posts/linkToTheDatabase.jpg')
  assert.is(link.status, 404)
  assert.not.ok(link.body.includes('SQLite format'))

  // uploads/comments points outside the uploads folder (at the data directory itself).
  mkdirSync(path.join(server.dataDir, 'outside'))
  writeFileSync(path.join(server.dataDir, 'outside', 'secretOutside1.jpg'), 'secret')
  symlinkSync(path.join(server.dataDir, 'outside'), path.join(server.dataDir, 'uploads', 'comments'))
  await record('uploads/comments/secretOutside1.jpg')
  const viaDir = await rawGet(server, '/uploads/comments/secretOutside1.jpg')
  assert.is(viaDir.status, 404)
  assert.not.ok(viaDir.body.includes('secret'))
})

test('a recorded file that has gone from disk is 404, not an error', async () => {
  await record('uploads/posts/recordedButMissing.jpg')
  const res = await server.request('GET', '/uploads/posts/recordedButMissing.jpg')
  assert.is(res.status, 404)
  assert.is(res.body.status, 'error')
})

test('generated code images, recorded with kind codeimages, are served', async () => {
  const png = await solidImage(20, 10, 'png')
  const result = await storeFile(server.services, { kind: 'codeimages', userId: null, body: png, ext: 'png', mime: 'image/png', width: 20, height: 10, origin: server.url })
  assert.match(result.path, /^uploads\/codeimages\/[A-Za-z0-9_-]{24}\.png$/)
  assert.is(result.url, `${server.url}/${result.path}`)
  const res = await server.request('GET', '/' + result.path)
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/png')
  assert.ok(Buffer.compare(res.body, png) === 0)

  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
  const vector = await storeFile(server.services, { kind: 'codeimages', userId: null, body: svg, ext: 'svg', mime: 'image/svg+xml', origin: server.url })
  const served = await server.request('GET', '/' + vector.path)
  assert.is(served.status, 200)
  assert.is(served.headers.get('content-type'), 'image/svg+xml')
  assert.match(served.headers.get('content-security-policy') ?? '', /default-src 'none'.*sandbox/, 'scripts in a served SVG cannot run')
})

test('the url of an upload uses PLAZA_PUBLIC_URL when it is set', async () => {
  const behindProxy = await startTestServer({ env: { PLAZA_PUBLIC_URL: 'https://media.plaza.example/' } })
  try {
    const owner = await registerUser(behindProxy)
    const res = await upload(behindProxy, 'post', owner.token, await solidImage(8, 8, 'jpeg'))
    assert.is(res.body.data.url, `https://media.plaza.example/${res.body.data.path}`)
  } finally {
    await behindProxy.close()
  }
})

test.run()
