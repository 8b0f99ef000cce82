import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { SNIPPET, decode } from './helpers.js'

let server: TestServer
test.before(async () => {
  // A loaded CI machine can take longer than the default 15 s budget for the big render below; the budget has its own test.
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const post = (body: unknown, headers: Record<string, string> = {}) => server.request('POST', '/api/codeimage', { body, headers })

test('answers PNG bytes by default', async () => {
  const res = await post({ codeSnippet: SNIPPET, title: 'server.js', padding: 32 })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/png')
  const image = await decode(res.body)
  assert.is(image.width, Number(res.headers.get('x-image-width')))
  assert.is(res.headers.get('x-code-language'), 'javascript')
})

test('answers SVG with format svg', async () => {
  const res = await post({ codeSnippet: SNIPPET, format: 'svg', language: 'js' })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/svg+xml')
  assert.match(res.body.toString('utf8'), /^<svg /)
})

test('with Accept: application/json it stores a real PNG and answers where', async () => {
  const res = await post({ codeSnippet: SNIPPET, theme: 'sunset', darkMode: false, scale: 1 }, { accept: 'application/json' })
  assert.is(res.status, 200)
  assert.is(res.body.message, 'Code image created')
  assert.match(res.body.path, /^uploads\/codeimages\/[A-Za-z0-9_-]{24}\.png$/)
  assert.is(res.body.url, `${server.url}/${res.body.path}`)
  const file = path.join(server.dataDir, res.body.path)
  assert.ok(existsSync(file))
  const image = await decode(readFileSync(file))
  assert.is(image.width, res.body.width)
  assert.is(image.height, res.body.height)
  const served = await fetch(res.body.url)
  assert.is(served.status, 200)
  assert.is(Buffer.compare(Buffer.from(await served.arrayBuffer()), readFileSync(file)), 0)
})

test('bad input gets the right status and a clear message in the error envelope', async () => {
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['empty snippet', { codeSnippet: '   ' }, 400, /codeSnippet is required/],
    ['no snippet', {}, 400, /codeSnippet is required/],
    ['unknown theme', { codeSnippet: 'x', theme: 'rainbow' }, 400, /Unknown theme "rainbow"; valid themes: candy, crimson, .*wrapped/],
    ['unknown language', { codeSnippet: 'x', language: 'klingon' }, 400, /Unknown language "klingon"/],
    ['padding too large', { codeSnippet: 'x', padding: 300 }, 400, /padding must be from 0 to 256/],
    ['padding negative', { codeSnippet: 'x', padding: -4 }, 400, /padding must be from 0 to 256/],
    ['padding not a number', { codeSnippet: 'x', padding: 'wide' }, 400, /padding must be a number/],
    ['scale out of range', { codeSnippet: 'x', scale: 7 }, 400, /scale must be from 1 to 6/],
    ['bad format', { codeSnippet: 'x', format: 'gif' }, 400, /format must be png or svg/],
    ['bad highlight', { codeSnippet: 'a\nb', highlightLines: '2-9' }, 400, /highlightLines: "2-9" is not a range of lines within 1-2/],
    ['darkMode not boolean', { codeSnippet: 'x', darkMode: 'maybe' }, 400, /darkMode must be true or false/],
    ['too many bytes', { codeSnippet: 'x'.repeat(32 * 1024 + 1) }, 413, /limit is 32768 bytes \(32 KiB\)/],
    ['too many lines', { codeSnippet: 'x\n'.repeat(1001) + 'x' }, 413, /limit is 1000 lines/],
    ['body not an object', [1, 2], 400, /must be a JSON object/],
  ]
  for (const [name, body, status, message] of cases) {
    const res = await post(body)
    assert.is(res.status, status, name)
    assert.is(res.body.status, 'error', name)
    assert.is(res.body.data, null, name)
    assert.match(res.body.message, message, name)
  }
  const malformed = await server.request('POST', '/api/codeimage', { raw: '{nope', headers: { 'content-type': 'application/json' } })
  assert.is(malformed.status, 400)
  assert.is(malformed.body.message, 'Request body is not valid JSON')
})

test('a large render does not hold up other requests', async () => {
  const big = Array.from({ length: 750 }, (_, i) => `const value${i} = compute(${i}) // line ${i}`).join('\n')
  const order: string[] = []
  const rendering = post({ codeSnippet: big, scale: 1 }).then((res) => {
    order.push('render')
    return res
  })
  const health = server.request('GET', '/health').then((res) => {
    order.push('health')
    return res
  })
  assert.is((await health).status, 200)
  assert.is((await rendering).status, 200)
  assert.equal(order, ['health', 'render'])
})

test('tRPC: codeimage.create stores the image too', async () => {
  const res = await server.request('POST', '/trpc/codeimage.create', { body: { codeSnippet: 'print("hi")', language: 'python' } })
  assert.is(res.status, 200)
  assert.match(res.body.result.data.path, /^uploads\/codeimages\/.+\.png$/)
})

test('a render past the time budget is a 503, and the server goes on serving', async () => {
  const slow = await startTestServer({ env: { PLAZA_CODEIMAGE_TIMEOUT_MS: '1' } })
  try {
    const res = await slow.request('POST', '/api/codeimage', { body: { codeSnippet: SNIPPET } })
    assert.is(res.status, 503)
    assert.match(res.body.message, /Rendering took longer than 0.001 s/)
    assert.is((await slow.request('GET', '/health')).status, 200)
  } finally {
    await slow.close()
  }
})

test.run()
