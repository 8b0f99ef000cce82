/** OpenAI's own npm client generating images through Plaza (`images.generate`), both answer formats and its errors. */
import OpenAI from 'openai'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { colourOf, json, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let fake: FakeProviders
let server: TestServer
let openai: OpenAI

test.before(async () => {
  fake = await startFakeProviders()
  server = await startTestServer({ env: { PLAZA_IMAGES_BASE_URL: `${fake.url}/v1`, PLAZA_IMAGES_API_KEY: 'sk-upstream-9876' } })
  openai = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: 'unused-by-plaza', maxRetries: 0 })
})
test.after(async () => {
  await server.close()
  await fake.close()
})

async function firstPixel(bytes: Buffer) {
  const { data } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  return [...data.subarray(0, 3)]
}

test('images.generate with b64_json: two images, each the one the provider drew', async () => {
  const result = await openai.images.generate({ model: 'dall-e-3', prompt: 'a red fox', n: 2, size: '1024x1024', response_format: 'b64_json' })
  assert.type(result.created, 'number')
  assert.is(result.data!.length, 2)
  for (const image of result.data!) assert.equal(await firstPixel(Buffer.from(image.b64_json!, 'base64')), colourOf('a red fox'))
  const upstream = fake.requests.at(-1)!
  assert.equal(upstream.body, { model: 'dall-e-3', prompt: 'a red fox', n: 2, size: '1024x1024', response_format: 'b64_json' })
})

test('images.generate with url (the default): a stored file on Plaza that serves the image', async () => {
  const result = await openai.images.generate({ prompt: 'a blue whale' })
  const url = result.data![0].url!
  assert.match(url, new RegExp(`^${server.url}/uploads/imagine/[\\w-]{24}\\.png$`))
  const response = await fetch(url)
  assert.is(response.headers.get('content-type'), 'image/png')
  assert.equal(await firstPixel(Buffer.from(await response.arrayBuffer())), colourOf('a blue whale'))
})

test('errors are OpenAI APIErrors: 400 with the param, 502 from the provider with the key scrubbed', async () => {
  const bad = await openai.images.generate({ prompt: 'x', model: 'midjourney' }).catch((error) => error)
  assert.instance(bad, OpenAI.BadRequestError)
  assert.is(bad.status, 400)
  assert.is(bad.param, 'model')

  fake.enqueue(json(401, { error: { message: 'Incorrect API key provided: sk-upstream-9876' } }))
  const upstream = await openai.images.generate({ prompt: 'x' }).catch((error) => error)
  assert.instance(upstream, OpenAI.APIError)
  assert.is(upstream.status, 502)
  assert.is(upstream.code, 'upstream_error')
  assert.match(upstream.message, /Incorrect API key provided: \[redacted\]/)
  assert.not.match(upstream.message, /sk-upstream-9876/)
})

test('gateway keys: once one exists, a call without it is 401 and a key restricted to other models is 403', async () => {
  const access = await server.services.gatewayAccess()
  const { key } = await access.createKey({ name: 'images', rpm: 1000 })
  const restricted = await access.createKey({ name: 'chat-only', models: ['chaty'] })
  const anonymous = await openai.images.generate({ prompt: 'x', response_format: 'b64_json' }).catch((error) => error)
  assert.instance(anonymous, OpenAI.AuthenticationError)
  const other = await new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: restricted.key, maxRetries: 0 }).images.generate({ prompt: 'x', model: 'sdxl' }).catch((error) => error)
  assert.instance(other, OpenAI.PermissionDeniedError)
  const keyed = new OpenAI({ baseURL: `${server.url}/api/v1`, apiKey: key, maxRetries: 0 })
  const result = await keyed.images.generate({ prompt: 'with a key', response_format: 'b64_json' })
  assert.equal(await firstPixel(Buffer.from(result.data![0].b64_json!, 'base64')), colourOf('with a key'))
  await access.revokeKey('images')
  await access.revokeKey('chat-only')
})

test.run()
