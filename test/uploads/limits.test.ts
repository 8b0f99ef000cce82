import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import { type RegisteredUser, registerUser, startServerWithUser, startTestServer, type TestServer } from '../helpers/server.js'
import { filesOnDisk, MiB, minimalMp4, mp4Box, recordedVideo, solidImage, upload } from './fixtures.js'

let server: TestServer
let user: RegisteredUser
test.before(async () => void ({ server, user } = await startServerWithUser()))
test.after(() => server.close())

/** A JPEG's magic bytes then `size` bytes of filler: sniffs as an image, so only the size rule can refuse it. */
function bigJpeg(size: number): Buffer {
  const bytes = Buffer.alloc(size, 0x55)
  bytes.set([0xff, 0xd8, 0xff, 0xe0])
  return bytes
}

/**
 * A multipart body streamed in chunks with no Content-Length (chunked transfer), so the server
 * can only find out the size while reading.
 */
function streamedUpload(route: string, token: string, head: Buffer, total: number) {
  const boundary = 'plaza-test-boundary'
  const opening = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`)
  const closing = Buffer.from(`\r\n--${boundary}--\r\n`)
  let sent = 0
  const chunk = Buffer.alloc(256 * 1024, 0x55)
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(opening))
      controller.enqueue(new Uint8Array(head))
      sent = head.length
    },
    pull(controller) {
      if (sent >= total) {
        controller.enqueue(new Uint8Array(closing))
        controller.close()
        return
      }
      controller.enqueue(new Uint8Array(chunk))
      sent += chunk.length
    },
  })
  return fetch(`${server.url}/api/mobile/upload/${route}`, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit)
}

async function stillHealthy() {
  const health = await server.request('GET', '/health')
  assert.is(health.status, 200)
  const small = await upload(server, 'post', user.token, await solidImage(16, 16, 'png'), 'ok.png', 'image/png')
  assert.is(small.status, 201, 'a normal upload still works afterwards')
}

/** Polls `condition` until it holds (or gives up after a generous deadline, letting the assertion after it report). */
async function eventually(condition: () => boolean, deadlineMs = 10_000) {
  const end = Date.now() + deadlineMs
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
}

async function rowCount(): Promise<number> {
  const [{ n }] = await server.services.db.all<{ n: number }>(sql`select count(*) as n from uploads`)
  return n
}

test('an image over 10 MiB is 413 in the envelope (declared length), and the server stays healthy', async () => {
  const rows = await rowCount()
  const res = await upload(server, 'post', user.token, bigJpeg(11 * MiB))
  assert.is(res.status, 413)
  assert.is(res.body.status, 'error')
  assert.is(res.body.data, null)
  assert.match(res.body.message, /10 MiB/)
  assert.is(await rowCount(), rows)
  await stillHealthy()
})

test('an image over 10 MiB streamed without a length is cut off at the limit with 413', async () => {
  const files = filesOnDisk(server.dataDir)
  const res = await streamedUpload('post', user.token, Buffer.from([0xff, 0xd8, 0xff, 0xe0]), 12 * MiB)
  assert.is(res.status, 413)
  const body = await res.json()
  assert.is(body.status, 'error')
  assert.match(body.message, /too large/)
  assert.equal(filesOnDisk(server.dataDir), files)
  await stillHealthy()
})

test('stories take video up to 50 MiB but still hold images to 10 MiB', async () => {
  const image = await upload(server, 'story', user.token, bigJpeg(11 * MiB))
  assert.is(image.status, 413)
  assert.match(image.body.message, /images may be at most 10 MiB/)

  // A real video padded with a 12 MiB `free` box, which players (and ffmpeg) skip.
  const video = Buffer.concat([await recordedVideo('mp4'), mp4Box('free', Buffer.alloc(12 * MiB, 1))])
  const accepted = await upload(server, 'story', user.token, video, 'clip.mp4', 'video/mp4')
  assert.is(accepted.status, 201, 'a 12 MiB video is within the story limit')

  const files = filesOnDisk(server.dataDir)
  const tooBig = await streamedUpload('story', user.token, minimalMp4(0), 51 * MiB)
  assert.is(tooBig.status, 413)
  assert.match((await tooBig.json()).message, /50 MiB/)
  assert.equal(filesOnDisk(server.dataDir), files, 'the partial video was removed')
  await stillHealthy()
})

test('a client that goes away mid-upload leaves nothing behind', async () => {
  const files = filesOnDisk(server.dataDir)
  const rows = await rowCount()
  const boundary = 'plaza-abort'
  let pulls = 0
  let abort!: () => void
  const interrupted = new Promise<void>((resolve) => (abort = resolve))
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="v.mp4"\r\n\r\n`))
      controller.enqueue(new Uint8Array(minimalMp4(0)))
    },
    async pull(controller) {
      if (++pulls === 8) {
        abort()
        controller.error(new Error('client gave up'))
        return
      }
      controller.enqueue(new Uint8Array(256 * 1024))
    },
  })
  const request = fetch(`${server.url}/api/mobile/upload/story`, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit).catch((error: Error) => error)
  await interrupted
  assert.instance(await request, Error)
  await stillHealthy()
  assert.is(await rowCount(), rows + 1, 'only the health-check upload was recorded')
  // The server notices the broken connection on its own schedule; wait for the cleanup rather than for a fixed time.
  await eventually(() => filesOnDisk(server.dataDir).length === files.length + 1)
  assert.is(filesOnDisk(server.dataDir).length, files.length + 1, 'no partial video is left')
})

test('uploads count against the upload rate limit per user, with Retry-After', async () => {
  const limited = await startTestServer({ rateLimits: { ...DEFAULT_RATE_LIMITS, upload: { max: 2, windowMs: 60_000 } } })
  try {
    const caller = await registerUser(limited)
    const other = await registerUser(limited)
    const image = await solidImage(8, 8, 'png')
    for (let i = 0; i < 2; i++) assert.is((await upload(limited, 'post', caller.token, image, 'a.png', 'image/png')).status, 201)
    const refused = await upload(limited, 'post', caller.token, image, 'a.png', 'image/png')
    assert.is(refused.status, 429)
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    assert.is(refused.body.status, 'error')
    assert.is((await upload(limited, 'avatar', other.token, image, 'a.png', 'image/png')).status, 201, 'other users have their own budget')
  } finally {
    await limited.close()
  }
})

test.run()
