/**
 * GET /api/imageFx, /api/imageFx/effects, /api/diffuser/expand and /api/upscale on the real server,
 * with images served from a loopback server (PLAZA_FETCH_ALLOW_PRIVATE=1) or uploaded first. Every
 * answer is decoded and its pixels checked.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdirSync, existsSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { IMAGE_EFFECTS } from '../../src/shared/schemas/imaging.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { animatedGif, noisyImage, pngBomb } from '../uploads/fixtures.js'

let server: TestServer
let files: { url: string; set(name: string, body: Buffer, type?: string): void; close(): Promise<void> }

async function serveFiles() {
  const bodies = new Map<string, { body: Buffer; type: string }>()
  const host = http.createServer((req, res) => {
    const file = bodies.get(req.url!)
    if (!file) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body)
  })
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(host.address() as AddressInfo).port}`,
    set: (name: string, body: Buffer, type = 'image/png') => void bodies.set(`/${name}`, { body, type }),
    close: () => new Promise<void>((resolve) => { host.closeAllConnections(); host.close(() => resolve()) }),
  }
}

test.before(async () => {
  server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
  files = await serveFiles()
})
test.after(async () => {
  await server.close()
  await files.close()
})

async function pixels(bytes: Buffer) {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)]
  return { data, info, at }
}

/** Four coloured quadrants: red, green, blue, white. */
async function quadrants(width = 200, height = 120, format: 'png' | 'jpeg' = 'png') {
  const raw = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const colour = y < height / 2 ? (x < width / 2 ? [220, 30, 30] : [30, 200, 40]) : x < width / 2 ? [30, 40, 210] : [250, 250, 250]
      raw.set(colour, (y * width + x) * 3)
    }
  return sharp(raw, { raw: { width, height, channels: 3 } })[format]().toBuffer()
}

const fx = (query: string, headers: Record<string, string> = {}) => server.request('GET', `/api/imageFx?${query}`, { headers })

test('the effects list: numbered from 1, at least 20, names unique', async () => {
  const res = await server.request('GET', '/api/imageFx/effects')
  assert.is(res.status, 200)
  assert.ok(res.body.effects.length >= 20)
  assert.equal(res.body.effects[0], { index: 1, name: 'grayscale', description: IMAGE_EFFECTS[0][1] })
  assert.is(new Set(res.body.effects.map((e: { name: string }) => e.name)).size, res.body.effects.length)
})

test('grayscale makes r = g = b; invert flips a known pixel; by number and by name alike; url= is an alias', async () => {
  files.set('q.png', await quadrants())
  const grey = await fx(`imageUrl=${files.url}/q.png&effectIndex=1`)
  assert.is(grey.status, 200, JSON.stringify(grey.body))
  assert.is(grey.headers.get('content-type'), 'image/png')
  const g = await pixels(grey.body)
  assert.equal([g.info.width, g.info.height], [200, 120])
  for (let i = 0; i < g.data.length; i += 3) assert.ok(g.data[i] === g.data[i + 1] && g.data[i + 1] === g.data[i + 2], `pixel ${i / 3} is not grey`)
  const byName = await fx(`url=${files.url}/q.png&effect=GrayScale`)
  assert.ok(Buffer.compare(byName.body, grey.body) === 0)
  const inverted = await pixels((await fx(`imageUrl=${files.url}/q.png&effect=invert`)).body)
  assert.equal(inverted.at(10, 10), [35, 225, 225])
  assert.equal(inverted.at(190, 110), [5, 5, 5])
})

test('blur lowers the contrast across an edge; pixelate makes uniform blocks; rotate turns the image', async () => {
  files.set('q.png', await quadrants())
  const original = await pixels(await quadrants())
  const blurred = await pixels((await fx(`imageUrl=${files.url}/q.png&effect=blur`)).body)
  const step = (image: typeof original) => Math.abs(image.at(99, 30)[0] - image.at(100, 30)[0])
  assert.ok(step(blurred) < step(original) / 2, `edge step ${step(blurred)} vs ${step(original)}`)

  files.set('noise.png', await noisyImage(640, 480, 'png'))
  const pixelated = await pixels((await fx(`imageUrl=${files.url}/noise.png&effect=pixelate`)).body)
  // 640 px across in 64 blocks: 10 × 10 blocks of one colour.
  for (const [bx, by] of [[0, 0], [13, 7], [63, 47]]) {
    const first = pixelated.at(bx * 10, by * 10)
    for (let dy = 0; dy < 10; dy++) for (let dx = 0; dx < 10; dx++) assert.equal(pixelated.at(bx * 10 + dx, by * 10 + dy), first)
  }
  assert.not.equal(pixelated.at(0, 0), pixelated.at(10, 0))

  const rotated = await pixels((await fx(`imageUrl=${files.url}/q.png&effect=rotate`)).body)
  assert.equal([rotated.info.width, rotated.info.height], [120, 200])
  // Clockwise: the bottom-left (blue) quadrant comes to the top left.
  assert.equal(rotated.at(5, 5), [30, 40, 210])
})

test('sepia, threshold, posterize, solarize, vignette, mirror and duotone change pixels as named', async () => {
  files.set('q.png', await quadrants())
  const get = async (effect: string) => pixels((await fx(`imageUrl=${files.url}/q.png&effect=${effect}`)).body)
  const sepia = await get('sepia')
  // Blue becomes a brown: red over green over blue.
  const [r, g, b] = sepia.at(10, 90)
  assert.ok(r > g && g > b && r - b > 20, `sepia of blue ${[r, g, b]}`)
  const threshold = await get('threshold')
  for (const [x, y] of [[10, 10], [150, 10], [10, 90], [150, 90]]) assert.ok([0, 255].includes(threshold.at(x, y)[0]))
  assert.equal(threshold.at(150, 90), [255, 255, 255])
  const poster = await get('posterize')
  assert.equal(poster.at(10, 10), [224, 32, 32])
  const solar = await get('solarize')
  assert.equal(solar.at(10, 10), [35, 30, 30])
  const vignette = await get('vignette')
  assert.ok(vignette.at(0, 0)[0] < 150 && vignette.at(99, 59)[0] > 150, 'corners darker than the centre')
  const mirror = await get('mirror')
  assert.equal(mirror.at(10, 10), [30, 200, 40])
  const duotone = await get('duotone')
  // Light grey (250) lands near the highlight colour, blue (dark) near the shadow colour.
  const expected = (level: number) => [20, 30, 90].map((d, i) => d + (([120, 230, 255][i] - d) * level) / 255)
  const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 3)
  assert.ok(near(duotone.at(150, 90), expected(250)), `${duotone.at(150, 90)}`)
  const blueGrey = (await get('grayscale')).at(10, 90)[0]
  assert.ok(near(duotone.at(10, 90), expected(blueGrey)), `${duotone.at(10, 90)}`)
})

test('every effect answers an image of the right size that differs from the input', async () => {
  files.set('small.png', await quadrants(64, 48))
  const input = await pixels(await quadrants(64, 48))
  for (let i = 1; i <= IMAGE_EFFECTS.length; i++) {
    const res = await fx(`imageUrl=${files.url}/small.png&effectIndex=${i}`)
    assert.is(res.status, 200, `${IMAGE_EFFECTS[i - 1][0]}: ${JSON.stringify(res.body)}`)
    const out = await pixels(res.body)
    const rotate = IMAGE_EFFECTS[i - 1][0] === 'rotate'
    assert.equal([out.info.width, out.info.height], rotate ? [48, 64] : [64, 48])
    assert.ok(rotate || Buffer.compare(out.data, input.data) !== 0, `${IMAGE_EFFECTS[i - 1][0]} changed nothing`)
  }
})

test('transparency survives a colour effect; JPEG in gives JPEG out; an animation keeps its first frame', async () => {
  const translucent = await sharp({ create: { width: 20, height: 10, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 0.5 } } }).png().toBuffer()
  files.set('alpha.png', translucent)
  const inverted = await sharp((await fx(`imageUrl=${files.url}/alpha.png&effect=invert`)).body).raw().toBuffer({ resolveWithObject: true })
  assert.is(inverted.info.channels, 4)
  assert.equal([...inverted.data.subarray(0, 4)], [55, 245, 245, 128])

  files.set('photo.jpg', await quadrants(200, 120, 'jpeg'), 'image/jpeg')
  const jpeg = await fx(`imageUrl=${files.url}/photo.jpg&effect=sharpen`)
  assert.is(jpeg.headers.get('content-type'), 'image/jpeg')
  assert.is((await sharp(jpeg.body).metadata()).format, 'jpeg')

  files.set('anim.gif', await animatedGif(60, 40), 'image/gif')
  const still = await fx(`imageUrl=${files.url}/anim.gif&effect=invert`)
  const meta = await sharp(still.body).metadata()
  assert.equal([meta.format, meta.width, meta.height, meta.pages ?? 1], ['png', 60, 40, 1])
  // The first frame is red, so inverted it is cyan.
  assert.equal((await pixels(still.body)).at(30, 20), [0, 255, 255])
})

test('Accept: application/json stores the result under uploads/imagefx/, served, and the same request reuses it', async () => {
  files.set('q.png', await quadrants())
  const first = await fx(`imageUrl=${files.url}/q.png&effect=sepia`, { accept: 'application/json' })
  assert.is(first.status, 200)
  assert.match(first.body.path, /^uploads\/imagefx\/[A-Za-z0-9_-]{24}\.png$/)
  assert.equal([first.body.message, first.body.width, first.body.height], ['Effect sepia applied', 200, 120])
  assert.is(first.body.url, `${server.url}/${first.body.path}`)
  const served = await server.request('GET', `/${first.body.path}`)
  assert.is(served.status, 200)
  assert.is((await sharp(served.body).metadata()).width, 200)
  const again = await fx(`imageUrl=${files.url}/q.png&effectIndex=2`, { accept: 'application/json' })
  assert.is(again.body.path, first.body.path)
  // A stored result is itself an input, by path or by its absolute URL on this server.
  const chained = await fx(`imageUrl=${encodeURIComponent(first.body.url)}&effect=invert`)
  assert.is(chained.status, 200)
  const byPath = await fx(`imageUrl=${first.body.path}&effect=invert`)
  assert.ok(Buffer.compare(byPath.body, chained.body) === 0)
})

test('an uploads/... path of this server is an input; an unrecorded or malformed one is a 404', async () => {
  const user = await registerUser(server)
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(await quadrants(300, 200, 'jpeg'))]), 'q.jpg')
  const upload = await server.request('POST', '/api/mobile/upload/post', { token: user.token, raw: form })
  assert.is(upload.status, 201)
  const res = await server.request('GET', `/api/upscale?url=${upload.body.data.path}&scale=2`)
  assert.is(res.status, 200)
  assert.equal([Number(res.headers.get('x-image-width')), Number(res.headers.get('x-image-height'))], [600, 400])
  for (const bad of ['uploads/posts/AAAAAAAAAAAAAAAAAAAAAAAA.jpg', 'uploads/../plaza.db', '/uploads/posts/x.jpg']) {
    const missing = await fx(`imageUrl=${encodeURIComponent(bad)}&effect=invert`)
    assert.is(missing.status, 404, bad)
    assert.match(missing.body.message, /imageUrl: no such file on this server/)
  }
})

test('expand: the canvas has the asked ratio, the original centred over a darker blurred fill', async () => {
  files.set('q.png', await quadrants(200, 120))
  const original = await pixels(await quadrants(200, 120))
  for (const [ratio, width, height] of [['16:9', 213, 120], ['1:1', 200, 200], ['0.5', 200, 400], ['2', 240, 120]] as const) {
    const res = await server.request('GET', `/api/diffuser/expand?url=${files.url}/q.png&ratio=${ratio}`)
    assert.is(res.status, 200, JSON.stringify(res.body))
    const out = await pixels(res.body)
    assert.equal([out.info.width, out.info.height], [width, height], ratio)
    const left = Math.floor((width - 200) / 2)
    const top = Math.floor((height - 120) / 2)
    for (const [x, y] of [[10, 10], [150, 10], [10, 100], [150, 100]]) assert.equal(out.at(left + x, top + y), original.at(x, y), `${ratio} at ${x},${y}`)
  }
  const wide = await pixels((await server.request('GET', `/api/diffuser/expand?url=${files.url}/q.png&ratio=3:1`)).body)
  // The fill beside the image is darker than the image (white quadrant's side).
  assert.ok(wide.at(355, 100)[0] < 200, `fill ${wide.at(355, 100)}`)
  const stored = await server.request('GET', `/api/diffuser/expand?url=${files.url}/q.png&ratio=16:9`, { headers: { accept: 'application/json' } })
  assert.match(stored.body.path, /^uploads\/expand\//)
  assert.equal([stored.body.width, stored.body.height, stored.body.message], [213, 120, 'Image expanded to the ratio 16:9'])
})

test('upscale: 2x and 4x double and quadruple with lanczos; past 8192 px a side is a 400 naming the limit', async () => {
  files.set('q.png', await quadrants(100, 80))
  const twice = await server.request('GET', `/api/upscale?url=${files.url}/q.png`)
  assert.equal([Number(twice.headers.get('x-image-width')), Number(twice.headers.get('x-image-height'))], [200, 160])
  const four = await pixels((await server.request('GET', `/api/upscale?url=${files.url}/q.png&scale=4`)).body)
  assert.equal([four.info.width, four.info.height], [400, 320])
  assert.equal(four.at(20, 20), [220, 30, 30])
  // Sharpened: more edge energy than the same lanczos3 resize alone.
  files.set('noise.png', await noisyImage(60, 40, 'png'))
  const sharpened = await pixels((await server.request('GET', `/api/upscale?url=${files.url}/noise.png&scale=2`)).body)
  const plain = await pixels(await sharp(await noisyImage(60, 40, 'png')).resize(120, 80, { kernel: 'lanczos3' }).png().toBuffer())
  const energy = (image: typeof plain) => {
    let sum = 0
    for (let i = 3; i < image.data.length; i++) sum += Math.abs(image.data[i] - image.data[i - 3])
    return sum
  }
  assert.ok(energy(sharpened) > energy(plain) * 1.05, `${energy(sharpened)} vs ${energy(plain)}`)
  files.set('big.png', await sharp({ create: { width: 3000, height: 2000, channels: 3, background: 'gray' } }).png().toBuffer())
  const tooBig = await server.request('GET', `/api/upscale?url=${files.url}/big.png&scale=4`)
  assert.is(tooBig.status, 400)
  assert.match(tooBig.body.message, /12000×8000 .*at most 8192 px a side/)
  const stored = await server.request('GET', `/api/upscale?url=${files.url}/q.png&scale=2`, { headers: { accept: 'application/json' } })
  assert.match(stored.body.path, /^uploads\/upscale\//)
})

test('a heavy job does not hold up other requests: /health answers while a 4x upscale runs', async () => {
  files.set('large.jpg', await noisyImage(800, 600), 'image/jpeg')
  let upscaled = false
  const job = server.request('GET', `/api/upscale?url=${files.url}/large.jpg&scale=4`).then((res) => {
    upscaled = true
    return res
  })
  // Asked again and again while the upscale runs (no waiting on the clock): each is answered at
  // once, as the job is on sharp's threads, not the event loop.
  let answered = 0
  while (!upscaled) {
    const health = await server.request('GET', '/health')
    assert.is(health.status, 200)
    if (!upscaled) answered++
  }
  // One request at a time: a loop blocked for the whole job would let at most one through while it ran.
  assert.ok(answered >= 2, `${answered} /health answered while the upscale ran`)
  const res = await job
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.equal([Number(res.headers.get('x-image-width')), Number(res.headers.get('x-image-height'))], [3200, 2400])
})

const form = (body: Buffer, field = 'file') => {
  const data = new FormData()
  data.append(field, new Blob([new Uint8Array(body)]), 'image.bin')
  return data
}

test('POST forms: the multipart file instead of a URL, the other parameters in the query', async () => {
  const fxRes = await server.request('POST', '/api/imageFx?effect=invert', { raw: form(await quadrants()) })
  assert.is(fxRes.status, 200, JSON.stringify(fxRes.body))
  assert.equal((await pixels(fxRes.body)).at(10, 10), [35, 225, 225])
  const wide = await server.request('POST', '/api/diffuser/expand?ratio=16:9', { raw: form(await quadrants(200, 120)), headers: { accept: 'application/json' } })
  assert.equal([wide.status, wide.body.width, wide.body.height], [200, 213, 120])
  assert.match(wide.body.path, /^uploads\/expand\//)
  const up = await server.request('POST', '/api/upscale?scale=4', { raw: form(await quadrants(50, 40, 'jpeg')) })
  assert.is(up.headers.get('content-type'), 'image/jpeg')
  assert.equal([Number(up.headers.get('x-image-width')), Number(up.headers.get('x-image-height'))], [200, 160])
  const cases: Array<[string, FormData | string, number, RegExp]> = [
    ['/api/imageFx?effect=invert', form(await quadrants(), 'photo'), 400, /No file was sent/],
    ['/api/imageFx?effect=invert', form(Buffer.from('%PDF-1.4 not an image')), 415, /file: not an image Plaza reads.*application\/pdf/],
    ['/api/imageFx?effect=invert', form(pngBomb()), 400, /file: Image is too large/],
    ['/api/imageFx?effect=invert', form(Buffer.alloc(11 * 1024 * 1024)), 413, /larger than 10 MiB/],
    ['/api/imageFx', form(await quadrants()), 400, /effectIndex \(or effect\) is required/],
    ['/api/upscale?scale=3', form(await quadrants()), 400, /scale must be 2 or 4/],
    ['/api/diffuser/expand?ratio=16:9', '{"url": "x"}', 400, /multipart/],
  ]
  for (const [route, body, status, message] of cases) {
    const res = await server.request('POST', route, { raw: body, headers: typeof body === 'string' ? { 'content-type': 'application/json' } : {} })
    assert.is(res.status, status, `${route}: ${JSON.stringify(res.body)}`)
    assert.match(res.body.message, message, route)
  }
})

test('bad input: each a 4xx naming the problem, and nothing is written', async () => {
  files.set('page.html', Buffer.from('<html>hello</html>'), 'image/png')
  files.set('bomb.png', pngBomb())
  files.set('empty.png', Buffer.alloc(0))
  files.set('huge.png', Buffer.concat([await quadrants(10, 10), Buffer.alloc(11 * 1024 * 1024)]))
  const before = readdirSync(path.join(server.dataDir, 'uploads')).sort()
  const cases: Array<[string, number, RegExp]> = [
    ['/api/imageFx?effectIndex=1', 400, /imageUrl \(or url\) is required/],
    [`/api/imageFx?imageUrl=${files.url}/q.png`, 400, /effectIndex \(or effect\) is required/],
    [`/api/imageFx?imageUrl=${files.url}/q.png&effectIndex=0`, 400, /effectIndex must be from 1 to/],
    [`/api/imageFx?imageUrl=${files.url}/q.png&effectIndex=abc`, 400, /effectIndex must be a whole number/],
    [`/api/imageFx?imageUrl=${files.url}/q.png&effect=glitter`, 400, /effect must be one of: grayscale, sepia/],
    ['/api/imageFx?imageUrl=file:///etc/passwd&effect=invert', 400, /imageUrl: only http and https/],
    [`/api/imageFx?imageUrl=${files.url}/page.html&effect=invert`, 415, /imageUrl: not an image .*text\/html|its type was not recognised/],
    [`/api/imageFx?imageUrl=${files.url}/bomb.png&effect=invert`, 400, /imageUrl: Image is too large: 100000×100000/],
    [`/api/imageFx?imageUrl=${files.url}/empty.png&effect=invert`, 400, /imageUrl: the file is empty/],
    [`/api/imageFx?imageUrl=${files.url}/huge.png&effect=invert`, 413, /larger than 10 MiB/],
    [`/api/imageFx?imageUrl=${files.url}/missing.png&effect=invert`, 422, /answered HTTP 404/],
    [`/api/diffuser/expand?url=${files.url}/q.png`, 400, /ratio/],
    [`/api/diffuser/expand?url=${files.url}/q.png&ratio=16:0`, 400, /ratio must be W:H/],
    [`/api/diffuser/expand?url=${files.url}/q.png&ratio=100:1`, 400, /from 1:10 to 10:1/],
    [`/api/upscale?url=${files.url}/q.png&scale=3`, 400, /scale must be 2 or 4/],
    ['/api/upscale?scale=2', 400, /url/],
  ]
  for (const [route, status, message] of cases) {
    const res = await server.request('GET', route, { headers: { accept: 'application/json' } })
    assert.is(res.status, status, `${route}: ${JSON.stringify(res.body)}`)
    assert.match(res.body.message, message, route)
  }
  assert.equal(readdirSync(path.join(server.dataDir, 'uploads')).sort(), before)
  for (const kind of ['imagefx', 'expand', 'upscale']) {
    const dir = path.join(server.dataDir, 'uploads', kind)
    if (existsSync(dir)) assert.ok(readdirSync(dir).every((name) => !name.includes('tmp')))
  }
})

test('without PLAZA_FETCH_ALLOW_PRIVATE the loopback image server is refused', async () => {
  const strict = await startTestServer()
  try {
    const res = await strict.request('GET', `/api/imageFx?imageUrl=${files.url}/q.png&effect=invert`)
    assert.is(res.status, 400)
    assert.match(res.body.message, /imageUrl: 127\.0\.0\.1 is a private or loopback address/)
  } finally {
    await strict.close()
  }
})

test.run()
