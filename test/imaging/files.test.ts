/**
 * POST /api/files: a local image kept for the operations that take an uploads/... path. Checked
 * and re-encoded as an upload (metadata gone), named by its content, expiring like generated files.
 */
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { manualClock, startTestServer, type TestServer } from '../helpers/server.js'
import { pngBomb } from '../uploads/fixtures.js'

const form = (body: Buffer, field = 'file') => {
  const data = new FormData()
  data.append(field, new Blob([new Uint8Array(body)]), 'photo.jpg')
  return data
}

/** A JPEG that carries EXIF (a camera's make and model), as a phone photo does. */
const photo = () =>
  sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .jpeg()
    .withExif({ IFD0: { Make: 'PlazaCam', Model: 'Test 1' } })
    .toBuffer()

let server: TestServer
const clock = manualClock()
test.before(async () => {
  server = await startTestServer({ clock: clock.clock, env: { PLAZA_GENERATED_TTL: '1h' } })
})
test.after(async () => {
  await server.close()
})

test('stores the image re-encoded without its metadata, under uploads/files/, served at its url; the same image is the same file', async () => {
  const bytes = await photo()
  assert.is((await sharp(bytes).metadata()).exif !== undefined, true)
  const res = await server.request('POST', '/api/files', { raw: form(bytes) })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(res.body.message, 'File stored')
  assert.match(res.body.path, /^uploads\/files\/[A-Za-z0-9_-]{24}\.jpg$/)
  assert.is(res.body.url, `${server.url}/${res.body.path}`)
  assert.equal([res.body.width, res.body.height], [300, 200])
  const served = await fetch(res.body.url)
  assert.is(served.status, 200)
  assert.is(served.headers.get('content-type'), 'image/jpeg')
  const metadata = await sharp(Buffer.from(await served.arrayBuffer())).metadata()
  assert.equal([metadata.width, metadata.height, metadata.exif], [300, 200, undefined])
  const again = await server.request('POST', '/api/files', { raw: form(bytes) })
  assert.is(again.body.path, res.body.path)
})

test('its path is what the operations that take one read: a code image background', async () => {
  const stored = await server.request('POST', '/api/files', { raw: form(await photo()) })
  const image = await server.request('POST', '/api/codeimage', { body: { codeSnippet: 'let x = 1', backgroundImage: stored.body.path, padding: 32 } })
  assert.is(image.status, 200, JSON.stringify(image.body))
  assert.is(image.headers.get('content-type'), 'image/png')
  // The picture fills the padding: the corner pixel is its colour (200, 80, 40), not the theme's gradient.
  const { data } = await sharp(image.body).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const [r, g, b] = data.subarray(0, 3)
  assert.ok(Math.abs(r - 200) < 12 && Math.abs(g - 80) < 12 && Math.abs(b - 40) < 12, `corner ${r},${g},${b}`)
})

test('it expires like generated files: past PLAZA_GENERATED_TTL it is no longer served or read', async () => {
  const other = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#123456' } }).png().toBuffer()
  const stored = await server.request('POST', '/api/files', { raw: form(other) })
  assert.is((await fetch(stored.body.url)).status, 200)
  clock.advance(61 * 60_000)
  assert.is((await fetch(stored.body.url)).status, 404)
  const image = await server.request('POST', '/api/codeimage', { body: { codeSnippet: 'x', backgroundImage: stored.body.path } })
  assert.is(image.status, 404)
})

test('bad files are 4xx naming the problem, and nothing is stored', async () => {
  for (const [body, status, message] of [
    [form(await photo(), 'photo'), 400, /No file was sent/],
    [form(Buffer.from('%PDF-1.4 not an image')), 415, /file: not an image Plaza reads/],
    [form(pngBomb()), 400, /file: Image is too large/],
    [form(Buffer.alloc(11 * 1024 * 1024)), 413, /larger than 10 MiB/],
    ['{"file": "x"}', 400, /multipart/],
  ] as const) {
    const res = await server.request('POST', '/api/files', { raw: body, headers: typeof body === 'string' ? { 'content-type': 'application/json' } : {} })
    assert.is(res.status, status, JSON.stringify(res.body))
    assert.match(res.body.message, message)
  }
})

test.run()
