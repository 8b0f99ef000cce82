import { readFileSync, rmSync } from 'node:fs'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MediaQueue } from '../../src/server/media/queue.js'
import { normaliseVideo } from '../../src/server/media/video.js'
import { type RegisteredUser, startServerWithUser, tempDir, type TestServer } from '../helpers/server.js'
import { decodeVideo, ffmpeg, filesOnDisk, minimalMp4, minimalWebm, recordedVideo, solidImage, upload, videoMetadata } from './fixtures.js'

let server: TestServer
let user: RegisteredUser
test.before(async () => void ({ server, user } = await startServerWithUser()))
test.after(() => server.close())

async function rowCount(): Promise<number> {
  const [{ n }] = await server.services.db.all<{ n: number }>(sql`select count(*) as n from uploads`)
  return n
}

async function download(path: string) {
  const res = await server.request('GET', '/' + path)
  assert.is(res.status, 200, `GET /${path}`)
  return res
}

for (const [container, stored, codec] of [
  ['mp4', 'mp4', 'h264'],
  ['mov', 'mp4', 'h264'],
  ['webm', 'webm', 'vp8'],
] as const) {
  test(`a ${container} story video is re-muxed into ${stored} without its location, title or device tags, and still plays`, async () => {
    const original = await recordedVideo(container)
    assert.match(await videoMetadata(original, container), /location=\+48\.8584/i, 'the fixture does carry a location')

    const res = await upload(server, 'story', user.token, original, `clip.${container}`, 'application/octet-stream')
    assert.is(res.status, 201, JSON.stringify(res.body))
    const data = res.body.data
    assert.ok(data.path.startsWith('uploads/stories/') && data.path.endsWith(`.${stored}`), data.path)
    assert.is(data.url, `${server.url}/${data.path}`)

    const served = await download(data.path)
    assert.is(served.headers.get('content-type'), `video/${stored}`)
    const metadata = await videoMetadata(served.body, stored)
    for (const secret of [/location/i, /48\.8584/, /secret/i, /title/i, /make/i, /ISO6709/i]) assert.not.match(metadata, secret)

    const decoded = await decodeVideo(served.body, stored)
    assert.is(decoded.errors, '', 'every frame decodes')
    assert.ok(decoded.streams.some((line) => line.includes(`Video: ${codec}`) && line.includes('320x240')), decoded.streams.join('\n'))
    assert.ok(decoded.streams.some((line) => line.includes('Audio:')), 'the sound is kept')
  })
}

test('a video story has a poster: the first frame as a JPEG of the video size, recorded as its own upload', async () => {
  const rows = await rowCount()
  const res = await upload(server, 'story', user.token, await recordedVideo('mp4'), 'clip.mp4', 'video/mp4')
  assert.is(res.status, 201)
  const { poster_path, poster_url } = res.body.data
  assert.ok(poster_path.startsWith('uploads/stories/') && poster_path.endsWith('.jpg'), poster_path)
  assert.is(poster_url, `${server.url}/${poster_path}`)
  assert.is(await rowCount(), rows + 2, 'the video and its poster are both recorded')

  const served = await download(poster_path)
  assert.is(served.headers.get('content-type'), 'image/jpeg')
  const meta = await sharp(served.body).metadata()
  assert.equal([meta.format, meta.width, meta.height, meta.exif, meta.xmp], ['jpeg', 320, 240, undefined, undefined])
  // testsrc's frame is colour bars, a gradient and digits: far from a blank image.
  const { entropy } = await sharp(served.body).stats()
  assert.ok(entropy > 2, `a real frame, not a blank image (entropy ${entropy})`)

  const image = await upload(server, 'story', user.token, await solidImage(20, 20, 'png'), 'a.png', 'image/png')
  assert.is(image.body.data.poster_path, undefined, 'images have no poster')
})

test('bytes that only look like a video (an ftyp or EBML header then junk) are 400 and leave nothing behind', async () => {
  const rows = await rowCount()
  const files = filesOnDisk(server.dataDir)
  for (const [bytes, name] of [
    [minimalMp4(), 'junk.mp4'],
    [minimalWebm(), 'junk.webm'],
  ] as const) {
    const res = await upload(server, 'story', user.token, bytes, name, 'video/mp4')
    assert.is(res.status, 400, name)
    assert.is(res.body.status, 'error')
    assert.is(res.body.data, null)
    assert.match(res.body.message, /could not be read as a video/)
  }
  assert.is(await rowCount(), rows)
  assert.equal(filesOnDisk(server.dataDir), files)
})

test('a video with no video stream is 400', async () => {
  const dir = tempDir('plaza-audio-')
  try {
    await ffmpeg(['-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'aac', `${dir}/sound.mp4`])
    const res = await upload(server, 'story', user.token, readFileSync(`${dir}/sound.mp4`), 'sound.mp4', 'video/mp4')
    assert.is(res.status, 400)
    assert.match(res.body.message, /no video stream/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('ffmpeg is killed past its time budget and the upload is refused with 413', async () => {
  const video = await recordedVideo('mp4')
  async function* source() {
    yield video
  }
  const queue = new MediaQueue({ concurrency: 1, queueLimit: 1 })
  // A budget of 1 ms always runs out: starting the ffmpeg process alone takes longer.
  const refused = await normaliseVideo(source(), 'mp4', { queue, timeoutMs: 1 }, async () => 'stored').catch((error) => error)
  assert.is(refused.code, 'PAYLOAD_TOO_LARGE')
  assert.match(refused.message, /took more than/)
  assert.equal(queue.stats, { running: 0, waiting: 0 }, 'the slot is given back')
})

test.run()
