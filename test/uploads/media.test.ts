/** Upload results and rows carry width, height and a BlurHash; a video also its poster and its size as shown, with no location left. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { decode, encode, isBlurhashValid } from 'blurhash'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { uploads } from '../../src/server/db/schema.js'
import { blurhashComponents, blurhashOf } from '../../src/server/media/blurhash.js'
import { encodeBlurhash } from '../../src/server/media/blurhash-encode.js'
import { type RegisteredUser, startServerWithUser, type TestServer } from '../helpers/server.js'
import { animatedGif, fetchStored, ffmpeg, jpegWithGps, solidImage, upload } from './fixtures.js'

let server: TestServer
let user: RegisteredUser
test.before(async () => void ({ server, user } = await startServerWithUser()))
test.after(() => server.close())

const BASE83 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~'

/** The components a BlurHash was encoded with: its first character is (x - 1) + (y - 1) × 9. */
function components(hash: string): { x: number; y: number } {
  const flag = BASE83.indexOf(hash[0])
  return { x: (flag % 9) + 1, y: Math.floor(flag / 9) + 1 }
}

/** The average colour of a BlurHash decoded to 8 × 8 pixels. */
function averageColour(hash: string): [number, number, number] {
  const pixels = decode(hash, 8, 8)
  const sum = [0, 0, 0]
  for (let i = 0; i < pixels.length; i += 4) for (let c = 0; c < 3; c++) sum[c] += pixels[i + c]
  return sum.map((value) => Math.round(value / 64)) as [number, number, number]
}

async function rowOf(storedPath: string) {
  const [row] = await server.services.db.select().from(uploads).where(eq(uploads.path, storedPath))
  return row
}

/** Asserts a result's blurhash is valid, has the components chosen for its size, and is what the row records. */
async function assertMeta(data: any, width: number, height: number) {
  assert.is(data.width, width, 'width')
  assert.is(data.height, height, 'height')
  assert.ok(isBlurhashValid(data.blurhash).result, `a valid BlurHash: ${data.blurhash}`)
  // The hash is computed from a copy at most 32 px on its longer side, so its aspect decides the components.
  const sample = width >= height ? { w: 32, h: Math.max(1, Math.round((32 * height) / width)) } : { w: Math.max(1, Math.round((32 * width) / height)), h: 32 }
  assert.equal(components(data.blurhash), blurhashComponents(sample.w, sample.h))
  const row = await rowOf(data.path)
  assert.equal([row.width, row.height, row.blurhash], [width, height, data.blurhash], 'recorded once, at upload')
}

test('blurhashComponents: 4 along the longer side, 3 along the shorter, 4 × 4 for a square', () => {
  assert.equal(blurhashComponents(32, 24), { x: 4, y: 3 })
  assert.equal(blurhashComponents(24, 32), { x: 3, y: 4 })
  assert.equal(blurhashComponents(32, 32), { x: 4, y: 4 })
})

/** Raw RGBA pixels of `width` × `height` from a colour function. */
function pixelsOf(width: number, height: number, colour: (x: number, y: number) => [number, number, number]): Uint8Array {
  const pixels = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) pixels.set([...colour(x, y), 255], 4 * (x + y * width))
  }
  return pixels
}

test('encodeBlurhash gives the blurhash package’s hash where the strongest component is positive, and keeps the contrast where it is negative', () => {
  const agree: Array<[string, number, number, (x: number, y: number) => [number, number, number], number, number]> = [
    ['light on the left', 32, 24, (x) => [255 - x * 8, 128, x * 8], 4, 3],
    ['light at the top', 24, 32, (_, y) => [200, 255 - y * 8, 40], 3, 4],
    ['a warm dot on the upper left', 32, 32, (x, y) => ((x - 8) ** 2 + (y - 8) ** 2 < 40 ? [250, 200, 40] : [20, 30, 60]), 4, 4],
    ['one flat colour', 8, 8, () => [10, 200, 90], 1, 1],
  ]
  for (const [name, width, height, colour, x, y] of agree) {
    const pixels = pixelsOf(width, height, colour)
    assert.is(encodeBlurhash(pixels, width, height, x, y), encode(new Uint8ClampedArray(pixels), width, height, x, y), name)
  }

  // Dark on the left: the strongest component is negative. The package scales by the largest signed
  // coefficient and clips it; the reference encoders (and this one) keep it.
  const darkLeft = pixelsOf(32, 16, (x) => (x < 16 ? [0, 0, 0] : [255, 255, 255]))
  const ours = decode(encodeBlurhash(darkLeft, 32, 16, 4, 3), 8, 1)
  const theirs = decode(encode(new Uint8ClampedArray(darkLeft), 32, 16, 4, 3), 8, 1)
  // BlurHash caps an AC coefficient at 0.5, so even a perfect encoding leaves the black edge mid-grey.
  assert.ok(ours[0] < 140 && ours[7 * 4] > 220, `ours: darker left edge ${ours[0]}, light right edge ${ours[28]}`)
  assert.ok(theirs[0] > ours[0] + 40, `the package's loses much of the dark half (${theirs[0]} against ${ours[0]}): why Plaza has its own encoder`)

  assert.throws(() => encodeBlurhash(darkLeft, 32, 16, 0, 3), /1 to 9 components/)
  assert.throws(() => encodeBlurhash(darkLeft, 31, 16, 4, 3), /do not match/)
})

test('image uploads answer the stored size and a BlurHash of the stored pixels, for every route and format', async () => {
  const cases: Array<[string, Buffer, string, number, number]> = [
    // Orientation 6: the sideways 400 × 200 pixels are stored (and measured) upright.
    ['post', await jpegWithGps(400, 200), 'photo.jpg', 200, 400],
    ['post', await solidImage(300, 120, 'png'), 'wide.png', 300, 120],
    ['comment', await solidImage(90, 160, 'webp'), 'tall.webp', 90, 160],
    ['story', await animatedGif(60, 40), 'loop.gif', 60, 40],
    // Larger than 2048 px on its longer side: the stored copy is scaled down, and that is its size.
    ['post', await solidImage(3000, 1500, 'jpeg'), 'big.jpg', 2048, 1024],
    // An avatar is cropped to a centred square of at most 512 px.
    ['avatar', await solidImage(800, 600, 'jpeg'), 'me.jpg', 512, 512],
  ]
  for (const [route, bytes, name, width, height] of cases) {
    const res = await upload(server, route, user.token, bytes, name)
    assert.is(res.status, 201, `${name}: ${JSON.stringify(res.body)}`)
    const { meta } = await fetchStored(server, res.body.data.path)
    assert.equal([meta.width, meta.pageHeight ?? meta.height], [width, height], `${name}: the served file has the answered size`)
    await assertMeta(res.body.data, width, height)
    assert.is(res.body.data.poster_url, undefined, 'images have no poster')
  }
})

test('the BlurHash shows the image: its colours decode back, and transparency is flattened onto white', async () => {
  const red = await upload(server, 'post', user.token, await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 220, g: 20, b: 20 } } }).png().toBuffer(), 'red.png')
  const [r, g, b] = averageColour(red.body.data.blurhash)
  assert.ok(r > 180 && g < 60 && b < 60, `red decodes red: ${[r, g, b]}`)

  const clear = await upload(server, 'post', user.token, await sharp({ create: { width: 40, height: 40, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer(), 'clear.png')
  assert.ok(averageColour(clear.body.data.blurhash).every((c) => c > 240), 'a transparent image is white, not black')

  // Left half black, right half white: the hash keeps which side is which.
  const halves = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#000000' } })
    .composite([{ input: { create: { width: 32, height: 32, channels: 3, background: '#ffffff' } }, left: 32, top: 0 }])
    .png()
    .toBuffer()
  const pixels = decode(await blurhashOf(halves), 8, 2)
  assert.ok(pixels[0] < 140 && pixels[7 * 4] > 220, `dark on the left, light on the right: ${pixels[0]} ${pixels[28]}`)
})

/**
 * A 1-second video made by ffmpeg, with extra output options (metadata, size); `copyWith` then
 * re-muxes it with further options (a rotation is only written on a stream copy).
 */
async function makeVideo(name: string, size: string, extra: string[], copyWith?: string[]): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'plaza-media-'))
  try {
    const file = path.join(dir, name)
    const encoded = copyWith ? path.join(dir, `first-${name}`) : file
    await ffmpeg(['-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=duration=1:size=${size}:rate=5`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', ...extra, encoded])
    if (copyWith) await ffmpeg(['-loglevel', 'error', '-i', encoded, '-c', 'copy', ...copyWith, file])
    return readFileSync(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('a QuickTime video loses its location atom (©xyz in udta); the result has its size, a poster and the poster’s BlurHash', async () => {
  const original = await makeVideo('clip.mov', '320x240', ['-metadata', 'location=+48.8584+002.2945/'])
  assert.ok(original.includes(Buffer.from('\u00a9xyz', 'latin1')), 'the fixture carries a ©xyz atom')
  assert.ok(original.includes('+48.8584+002.2945'), 'holding the position')

  const res = await upload(server, 'story', user.token, original, 'clip.mov', 'video/quicktime')
  assert.is(res.status, 201, JSON.stringify(res.body))
  const data = res.body.data
  const stored = (await fetchStoredBytes(data.path))
  assert.not.ok(stored.includes(Buffer.from('\u00a9xyz', 'latin1')), 'no ©xyz atom is left')
  assert.not.ok(stored.includes('48.8584'), 'nor the position anywhere in the file')

  await assertMeta(data, 320, 240)
  assert.is(data.poster_url, `${server.url}/${data.poster_path}`)
  const video = await rowOf(data.path)
  assert.is(video.poster, data.poster_path, 'the video row names its poster (deleting a story finds it)')
  const poster = await rowOf(data.poster_path)
  assert.equal([poster.width, poster.height, poster.blurhash, poster.mime], [320, 240, data.blurhash, 'image/jpeg'], 'the poster is an upload of its own')

  const { meta } = await fetchStored(server, data.poster_path)
  assert.equal([meta.format, meta.width, meta.height, meta.exif], ['jpeg', 320, 240, undefined], 'a real JPEG of the video size')
  // testsrc's frame is colour bars and a gradient: a poster of it is far from one flat colour.
  const { entropy } = await sharp((await fetchStored(server, data.poster_path)).bytes).stats()
  assert.ok(entropy > 2, `a real frame (entropy ${entropy})`)
})

async function fetchStoredBytes(storedPath: string): Promise<Buffer> {
  const res = await server.request('GET', '/' + storedPath)
  assert.is(res.status, 200)
  return res.body as Buffer
}

test('a rotated video answers its size as shown, and its poster is upright', async () => {
  const sideways = await makeVideo('turned.mp4', '320x240', [], ['-metadata:s:v:0', 'rotate=90'])
  const res = await upload(server, 'story', user.token, sideways, 'turned.mp4', 'video/mp4')
  assert.is(res.status, 201, JSON.stringify(res.body))
  await assertMeta(res.body.data, 240, 320)
  const { meta } = await fetchStored(server, res.body.data.poster_path)
  assert.equal([meta.width, meta.height], [240, 320])
})

test('a video larger than 2048 px keeps its own size in the result; only the poster is scaled down', async () => {
  const wide = await makeVideo('wide.mp4', '2560x1440', ['-frames:v', '1'])
  const res = await upload(server, 'story', user.token, wide, 'wide.mp4', 'video/mp4')
  assert.is(res.status, 201, JSON.stringify(res.body))
  await assertMeta(res.body.data, 2560, 1440)
  const { meta } = await fetchStored(server, res.body.data.poster_path)
  assert.equal([meta.width, meta.height], [2048, 1152])
  const poster = await rowOf(res.body.data.poster_path)
  assert.equal([poster.width, poster.height], [2048, 1152])
})

test.run()
