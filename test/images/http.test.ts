/**
 * GET /api/imagine, POST /api/v1/images/generations, GET /api/toanime, /api/zombie and
 * /api/removebg on the real server, against a loopback server speaking each image protocol.
 * Every image answered is decoded and its pixels compared with what the fake provider drew.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bytes, colourOf, json, solidPng, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'

let fake: FakeProviders
/** OpenAI images protocol for IMAGES, rembg for REMOVEBG. */
let openai: TestServer
/** AUTOMATIC1111 then hosted inference, from the config file; remove.bg's protocol for REMOVEBG. */
let a1111: TestServer
/** Nothing configured. */
let bare: TestServer

const KEY = 'sk-images-secret-4242'

test.before(async () => {
  fake = await startFakeProviders()
  openai = await startTestServer({
    env: {
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
      PLAZA_IMAGES_BASE_URL: `${fake.url}/v1`,
      PLAZA_IMAGES_API_KEY: KEY,
      PLAZA_REMOVEBG_BASE_URL: fake.url,
      PLAZA_REMOVEBG_PROTOCOL: 'rembg',
    },
  })
  const dir = tempDir()
  const file = path.join(dir, 'providers.yaml')
  writeFileSync(
    file,
    [
      'services:',
      '  images:',
      '    - protocol: automatic1111',
      `      base_url: ${fake.url}/a1111`,
      '      models: { sdxl: sd_xl_base_1.0.safetensors }',
      '    - protocol: hf-inference',
      `      base_url: ${fake.url}/hf`,
      '      api_key_env: HF_TOKEN',
      '  removebg:',
      '    - protocol: removebg',
      `      base_url: ${fake.url}`,
      '      api_key_env: REMOVEBG_KEY',
    ].join('\n'),
  )
  a1111 = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_LLM_CONFIG: file, HF_TOKEN: 'hf_token_5555', REMOVEBG_KEY: 'rbg-key-7777' } })
  bare = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
})
test.after(async () => {
  await Promise.all([openai.close(), a1111.close(), bare.close()])
  await fake.close()
})
test.before.each(() => void (fake.requests.length = 0))

async function pixels(image: Buffer) {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)]
  return { info, at }
}

/** A picture whose colours tell left from right: red left half, blue right half. */
async function halves(width = 80, height = 40): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(x < width / 2 ? [200, 20, 20] : [20, 20, 200], (y * width + x) * 3)
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer()
}

/** Serves a file from the fake provider's host: a path the fake does not answer itself. */
function serveSource(name: string, body: Buffer) {
  fake.enqueue(bytes(200, body, 'image/png'))
  return `${fake.url}/files/${name}`
}

test('imagine on the OpenAI images protocol: the alias mapped, b64_json asked, the key sent; the image is the one drawn', async () => {
  const prompt = 'a lighthouse at dusk'
  const res = await openai.request('GET', `/api/imagine?prompt=${encodeURIComponent(prompt)}&model=dalle-3&size=256x256`)
  assert.is(res.status, 200, String(res.body))
  assert.is(res.headers.get('content-type'), 'image/png')
  const image = await pixels(res.body)
  assert.equal([image.info.width, image.info.height], [64, 48])
  assert.equal(image.at(10, 10), [...colourOf(prompt), 255])
  const [call] = fake.requests
  assert.is(call.path, '/v1/images/generations')
  assert.equal(call.body, { model: 'dall-e-3', prompt, n: 1, size: '256x256', response_format: 'b64_json' })
  assert.is(call.headers.authorization, `Bearer ${KEY}`)
})

test('imagine with Accept: application/json stores the image under uploads/imagine/ and serves it there', async () => {
  const res = await openai.request('GET', '/api/imagine?prompt=stored&model=gpt-image', { headers: { accept: 'application/json' } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.path, /^uploads\/imagine\/[\w-]{24}\.png$/)
  assert.equal([res.body.width, res.body.height, res.body.model, res.body.message], [64, 48, 'gpt-image', 'Image generated with gpt-image'])
  // GPT Image refuses response_format: it is not sent.
  assert.equal(fake.requests[0].body, { model: 'gpt-image-1', prompt: 'stored', n: 1 })
  const served = await fetch(res.body.url)
  assert.is(served.status, 200)
  assert.equal((await pixels(Buffer.from(await served.arrayBuffer()))).at(0, 0), [...colourOf('stored'), 255])
})

test('an upstream answering by url: fetched from the provider, checked, re-encoded', async () => {
  const png = await solidPng([10, 200, 30], 40, 30)
  fake.enqueue(json(200, { created: 1, data: [{ url: `${fake.url}/v1/files/img-1.png` }] }), bytes(200, png, 'image/png'))
  const res = await openai.request('GET', '/api/imagine?prompt=by+url')
  assert.is(res.status, 200, String(res.body))
  assert.equal((await pixels(res.body)).at(5, 5), [10, 200, 30, 255])
  assert.is(fake.requests[1].path, '/v1/files/img-1.png')
  // A flux alias on the OpenAI protocol goes up under its own name (for routers that know it).
  assert.is(fake.requests[0].body.model, 'flux-schnell')
})

test('AUTOMATIC1111: txt2img with the size and the mapped checkpoint; hosted inference is its fallback', async () => {
  const res = await a1111.request('GET', '/api/imagine?prompt=castle&model=SDXL&size=96x64')
  assert.is(res.status, 200, String(res.body))
  const image = await pixels(res.body)
  assert.equal([image.info.width, image.info.height], [96, 64])
  assert.equal(image.at(50, 30), [...colourOf('castle'), 255])
  const [call] = fake.requests
  assert.is(call.path, '/a1111/sdapi/v1/txt2img')
  assert.is(call.body.prompt, 'castle')
  assert.equal([call.body.width, call.body.height, call.body.batch_size], [96, 64, 1])
  assert.equal(call.body.override_settings, { sd_model_checkpoint: 'sd_xl_base_1.0.safetensors' })
  assert.is(call.headers.authorization, undefined)

  // An alias the operator did not map keeps the loaded checkpoint.
  await a1111.request('GET', '/api/imagine?prompt=castle&model=sd15')
  assert.is(fake.requests.at(-1)!.body.override_settings, undefined)

  // A1111 down (5xx, retried) -> the hosted-inference target, with the default model for the alias in the path.
  fake.enqueue(json(503, { detail: 'busy' }), json(503, { detail: 'busy' }), json(503, { detail: 'busy' }))
  fake.requests.length = 0
  const fallback = await a1111.request('GET', '/api/imagine?prompt=meadow')
  assert.is(fallback.status, 200, String(fallback.body))
  assert.equal((await pixels(fallback.body)).at(1, 1), [...colourOf('meadow'), 255])
  const hf = fake.requests.at(-1)!
  assert.is(fake.requests.length, 4)
  assert.is(hf.path, '/hf/models/black-forest-labs/FLUX.1-schnell')
  assert.equal(hf.body, { inputs: 'meadow', parameters: {} })
  assert.is(hf.headers.authorization, 'Bearer hf_token_5555')
})

test('bytes that are not an image are refused: the next provider serves, or 502 when none does', async () => {
  fake.enqueue(json(200, { images: [Buffer.from('<html>not an image</html>').toString('base64')] }))
  const res = await a1111.request('GET', '/api/imagine?prompt=guarded')
  assert.is(res.status, 200)
  assert.is(fake.requests[1].path, '/hf/models/black-forest-labs/FLUX.1-schnell')

  fake.enqueue(json(200, { images: ['PGh0bWw+'] }), bytes(200, Buffer.from('%PDF-1.4 not a picture'), 'image/png'))
  const refused = await a1111.request('GET', '/api/imagine?prompt=guarded')
  assert.is(refused.status, 502)
  assert.is(refused.body.status, 'error')
  assert.match(refused.body.message, /not an image Plaza reads/)
  assert.match(refused.body.message, /tried 2 providers/)
})

test('a 429 with Retry-After: 0 is retried on the same provider and then succeeds; the answer names the provider', async () => {
  fake.enqueue(json(429, { error: { message: 'rate limited' } }, { 'retry-after': '0' }))
  const res = await openai.request('GET', '/api/imagine?prompt=patience')
  assert.is(res.status, 200, String(res.body))
  assert.is(res.headers.get('x-plaza-provider'), 'images/env')
  assert.equal((await pixels(res.body)).at(0, 0), [...colourOf('patience'), 255])
  assert.equal(fake.requests.map((r) => r.path), ['/v1/images/generations', '/v1/images/generations'])
})

test('malformed upstream JSON is 502 and names the provider', async () => {
  fake.enqueue(json(200, '{"data": [ {"b64_json": '))
  const res = await openai.request('GET', '/api/imagine?prompt=x')
  assert.is(res.status, 502)
  assert.match(res.body.message, /images provider env \(openai-images\) answered with something that is not JSON/)
  fake.enqueue(json(200, { data: [] }))
  assert.match((await openai.request('GET', '/api/imagine?prompt=x')).body.message, /no `data` list/)
})

test('toanime on AUTOMATIC1111: img2img with the fixed prompt; the answer is the provider’s transformation of the input', async () => {
  const source = serveSource('halves.png', await halves())
  const res = await a1111.request('GET', `/api/toanime?url=${encodeURIComponent(source)}`)
  assert.is(res.status, 200, String(res.body))
  const image = await pixels(res.body)
  assert.equal([image.info.width, image.info.height], [80, 40])
  // The fake inverts: red becomes cyan on the left, blue becomes yellow on the right.
  assert.equal(image.at(5, 5), [55, 235, 235, 255])
  assert.equal(image.at(75, 5), [235, 235, 55, 255])
  const call = fake.requests.find((r) => r.path === '/a1111/sdapi/v1/img2img')!
  assert.match(call.body.prompt, /anime/)
  // Sides in multiples of 8, at least 64: Stable Diffusion's latent grid.
  assert.equal([call.body.width, call.body.height], [80, 64])
})

test('zombie on the OpenAI protocol: /images/edits with the image as a multipart file; JSON stored under uploads/zombie/', async () => {
  const source = serveSource('z.png', await halves())
  const res = await openai.request('GET', `/api/zombie?url=${encodeURIComponent(source)}`, { headers: { accept: 'application/json' } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.path, /^uploads\/zombie\/[\w-]{24}\.png$/)
  const edit = fake.requests.find((r) => r.path === '/v1/images/edits')!
  assert.match(String(edit.headers['content-type']), /^multipart\/form-data; boundary=/)
  assert.match(edit.body.toString('latin1'), /name="prompt"\r\n\r\nthe same person as a zombie/)
  const served = await pixels(Buffer.from(await (await fetch(res.body.url)).arrayBuffer()))
  assert.equal(served.at(5, 5), [55, 235, 235, 255])
})

test('removebg on rembg and on remove.bg: the background made transparent, the key in X-Api-Key', async () => {
  for (const [server, expectPath] of [[openai, '/api/remove'], [a1111, '/v1.0/removebg']] as const) {
    fake.requests.length = 0
    const source = serveSource('p.png', await halves())
    const res = await server.request('GET', `/api/removebg?url=${encodeURIComponent(source)}`)
    assert.is(res.status, 200, String(res.body))
    assert.is(res.headers.get('content-type'), 'image/png')
    const image = await pixels(res.body)
    assert.is(image.at(5, 5)[3], 0, 'left half transparent')
    assert.equal(image.at(75, 5), [20, 20, 200, 255])
    const call = fake.requests.find((r) => r.path === expectPath)!
    assert.ok(call, expectPath)
    if (expectPath === '/v1.0/removebg') {
      assert.is(call.headers['x-api-key'], 'rbg-key-7777')
      assert.match(call.body.toString('latin1'), /name="image_file"; filename="image.png"/)
    }
  }
})

test('/api/upscale: AUTOMATIC1111 extra-single-image when an images target speaks it; Plaza’s own upscaling otherwise or when it fails', async () => {
  const source = serveSource('u.png', await halves())
  const ai = await a1111.request('GET', `/api/upscale?url=${encodeURIComponent(source)}&scale=4`)
  assert.is(ai.status, 200, String(ai.body))
  const image = await pixels(ai.body)
  assert.equal([image.info.width, image.info.height], [320, 160])
  assert.equal(image.at(10, 10), [200, 20, 20, 255])
  const call = fake.requests.find((r) => r.path === '/a1111/sdapi/v1/extra-single-image')!
  assert.equal([call.body.upscaling_resize, call.body.upscaler_1], [4, 'R-ESRGAN 4x+'])

  // Both of its targets fail (A1111 errors, the hosted-inference one does not upscale): upscaled here all the same.
  fake.requests.length = 0
  fake.enqueue(bytes(200, await halves(), 'image/png'), json(400, { error: 'bad image' }))
  const local = await a1111.request('GET', `/api/upscale?url=${encodeURIComponent(`${fake.url}/files/u2.png`)}&scale=2`)
  assert.is(local.status, 200, String(local.body))
  assert.equal([(await pixels(local.body)).info.width, (await pixels(local.body)).info.height], [160, 80])

  // No AUTOMATIC1111 target: no provider is asked.
  fake.requests.length = 0
  const plain = await openai.request('GET', `/api/upscale?url=${encodeURIComponent(serveSource('u3.png', await halves()))}&scale=2`)
  assert.is(plain.status, 200)
  assert.equal(fake.requests.map((r) => r.path), ['/files/u3.png'])
})

test('/api/diffuser/expand: the provider draws the new area (A1111 masked img2img, OpenAI edits over transparency), the original put back unchanged; Plaza’s own fill otherwise', async () => {
  // An 80 × 40 picture expanded to 1:1: an 80 × 80 canvas, the picture from y = 20 to 60.
  const local = await bare.request('GET', `/api/diffuser/expand?url=${encodeURIComponent(serveSource('e0.png', await halves()))}&ratio=1:1`)
  assert.is(local.status, 200, String(local.body))
  const plain = await pixels(local.body)
  const fill = plain.at(10, 5)
  assert.not.equal(fill, [200, 20, 20, 255], 'the new area is a fill, not the picture')
  const inverted = fill.slice(0, 3).map((v) => 255 - v)
  const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 3)

  fake.requests.length = 0
  const sd = await a1111.request('GET', `/api/diffuser/expand?url=${encodeURIComponent(serveSource('e1.png', await halves()))}&ratio=1:1`)
  assert.is(sd.status, 200, String(sd.body))
  const drawn = await pixels(sd.body)
  assert.equal([drawn.info.width, drawn.info.height], [80, 80])
  // The fake inverts what it is given: the new area is the provider's, the picture itself Plaza's original.
  assert.ok(near(drawn.at(10, 5).slice(0, 3), inverted), `${drawn.at(10, 5)} is the provider's drawing of ${fill}`)
  assert.equal(drawn.at(10, 30), [200, 20, 20, 255])
  assert.equal(drawn.at(70, 30), [20, 20, 200, 255])
  const call = fake.requests.find((r) => r.path === '/a1111/sdapi/v1/img2img')!
  assert.equal([call.body.width, call.body.height, call.body.inpainting_fill], [80, 80, 1])
  assert.match(call.body.prompt, /continuation/)
  const mask = await pixels(Buffer.from(call.body.mask, 'base64'))
  assert.equal([mask.at(10, 5), mask.at(40, 40)], [[255, 255, 255, 255], [0, 0, 0, 255]])

  fake.requests.length = 0
  const edit = await openai.request('GET', `/api/diffuser/expand?url=${encodeURIComponent(serveSource('e2.png', await halves()))}&ratio=1:1`)
  assert.is(edit.status, 200, String(edit.body))
  const edited = await pixels(edit.body)
  assert.ok(near(edited.at(10, 5).slice(0, 3), inverted), `${edited.at(10, 5)} is the provider's drawing`)
  assert.equal(edited.at(10, 30), [200, 20, 20, 255])
  const editCall = fake.requests.find((r) => r.path === '/v1/images/edits')!
  assert.is(editCall.headers.authorization, `Bearer ${KEY}`)
  assert.match(editCall.body.toString('latin1'), /name="model"\r\n\r\ndall-e-2/)

  // The A1111 target refuses and the hosted-inference one has no mask: expanded here, as without a provider.
  fake.enqueue(bytes(200, await halves(), 'image/png'), json(400, { error: 'bad mask' }))
  const fallback = await a1111.request('GET', `/api/diffuser/expand?url=${encodeURIComponent(`${fake.url}/files/e3.png`)}&ratio=1:1`)
  assert.is(fallback.status, 200, String(fallback.body))
  assert.equal((await pixels(fallback.body)).at(10, 5), fill)
})

test('hosted inference image-to-image: the image as base64 inputs, the fixed prompt in parameters, bytes back', async () => {
  const hf = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_IMAGES_BASE_URL: `${fake.url}/hf`, PLAZA_IMAGES_PROTOCOL: 'hf-inference' } })
  try {
    const source = serveSource('h.png', await halves())
    const res = await hf.request('GET', `/api/zombie?url=${encodeURIComponent(source)}`)
    assert.is(res.status, 200, String(res.body))
    assert.equal((await pixels(res.body)).at(75, 5), [235, 235, 55, 255])
    const call = fake.requests.find((r) => r.path.startsWith('/hf/models/'))!
    assert.is(call.path, '/hf/models/timbrooks/instruct-pix2pix')
    assert.match(call.body.parameters.prompt, /zombie/)
    const sent = await sharp(Buffer.from(call.body.inputs, 'base64')).metadata()
    assert.equal([sent.format, sent.width, sent.height], ['png', 80, 40])
  } finally {
    await hf.close()
  }
})

test('an image URL on another host is fetched through the fetch guard: refused where private addresses are', async () => {
  // The OpenAI server allows private addresses (tests), so a loopback URL of another port is fetched...
  const other = await startFakeProviders()
  try {
    fake.enqueue(json(200, { created: 1, data: [{ url: `${other.url}/files/elsewhere.png` }] }))
    other.enqueue(bytes(200, await solidPng([1, 2, 3]), 'image/png'))
    const res = await openai.request('GET', '/api/imagine?prompt=elsewhere')
    assert.is(res.status, 200, String(res.body))
    assert.equal((await pixels(res.body)).at(0, 0), [1, 2, 3, 255])
    assert.equal(other.requests.map((r) => r.path), ['/files/elsewhere.png'])
  } finally {
    await other.close()
  }
  // ...while a provider pointing at the metadata service is refused by the guard whatever the setting.
  fake.enqueue(json(200, { created: 1, data: [{ url: 'http://169.254.169.254/latest/meta-data/' }] }))
  const refused = await openai.request('GET', '/api/imagine?prompt=metadata')
  assert.is(refused.status, 502)
  assert.match(refused.body.message, /answered an image URL Plaza could not fetch/)
})

test('bad input is 400 and nothing reaches a provider', async () => {
  for (const query of ['', 'prompt=', 'prompt=x&model=midjourney', 'prompt=x&size=10x10', 'prompt=x&size=big', `prompt=${'x'.repeat(4001)}`]) {
    const res = await openai.request('GET', `/api/imagine?${query}`)
    assert.is(res.status, 400, query)
    assert.is(res.body.status, 'error')
  }
  assert.match((await openai.request('GET', '/api/imagine?prompt=x&model=midjourney')).body.message, /model must be one of: flux-schnell, .*gpt-image/)
  assert.is((await openai.request('GET', '/api/toanime')).status, 400)
  assert.is((await openai.request('GET', `/api/toanime?url=${encodeURIComponent('http://169.254.169.254/latest')}`)).status, 400)
  assert.is(fake.requests.length, 0)
})

test('unconfigured: 503 naming what to set, before any image is fetched; /api/list shows configured: false', async () => {
  const res = await bare.request('GET', '/api/imagine?prompt=x')
  assert.is(res.status, 503)
  assert.match(res.body.message, /No images provider is configured: set PLAZA_IMAGES_BASE_URL .*PLAZA_IMAGES_PROTOCOL=openai-images\|automatic1111\|hf-inference/)
  const source = serveSource('never.png', await halves())
  const anime = await bare.request('GET', `/api/toanime?url=${encodeURIComponent(source)}`)
  assert.is(anime.status, 503)
  assert.is(fake.requests.length, 0)
  fake.enqueue() // (the queued source was never fetched)
  const removebg = await bare.request('GET', `/api/removebg?url=${encodeURIComponent(source)}`)
  assert.is(removebg.status, 503)
  assert.match(removebg.body.message, /PLAZA_REMOVEBG_BASE_URL/)
  const openaiStyle = await bare.request('POST', '/api/v1/images/generations', { body: { prompt: 'x' } })
  assert.is(openaiStyle.status, 503)
  assert.is(openaiStyle.body.error.code, 'provider_not_configured')

  const list = await bare.request('GET', '/api/list')
  const row = (p: string) => list.body.operations.find((o: { path: string }) => o.path === p)
  for (const p of ['/api/imagine', '/api/v1/images/generations', '/api/toanime', '/api/zombie', '/api/removebg']) assert.equal([row(p).offered, row(p).configured], [true, false], p)
  const configured = await openai.request('GET', '/api/list')
  assert.ok(configured.body.operations.filter((o: { path: string }) => ['/api/imagine', '/api/removebg'].includes(o.path)).every((o: { configured: boolean }) => o.configured))
})

test.run()
