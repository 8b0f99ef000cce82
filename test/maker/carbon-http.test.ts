import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { decode, hex, near } from '../codeimage/helpers.js'

const CODE = 'fn main() {\n    println!("hello 🎉");\n}\n'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const post = (body: unknown, headers: Record<string, string> = {}) => server.request('POST', '/api/carbon', { body, headers })
const stored = () => {
  const dir = path.join(server.dataDir, 'uploads', 'carbon')
  return existsSync(dir) ? readdirSync(dir) : []
}

test('bad input: 400 (or 413) in the error envelope, and nothing stored', async () => {
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['no code', {}, 400, /code is required/],
    ['blank code', { code: '  \n ' }, 400, /code is required/],
    ['code not a string', { code: 42 }, 400, /code must be a string/],
    ['unknown theme', { code: 'x', theme: 'rainbow' }, 400, /Unknown theme "rainbow"; valid themes: 3024-night, .*seti.*zenburn/],
    ['unknown window theme', { code: 'x', windowTheme: 'round' }, 400, /Unknown windowTheme "round"; use none, sharp, bw, boxy/],
    ['bad padding', { code: 'x', paddingVertical: 'wide' }, 400, /paddingVertical must be a length from 0px to 256px/],
    ['padding too large', { code: 'x', paddingHorizontal: '400px' }, 400, /paddingHorizontal must be a length from 0px to 256px/],
    ['negative padding', { code: 'x', paddingHorizontal: -3 }, 400, /paddingHorizontal must be a length/],
    ['bad export size', { code: 'x', exportSize: '3x' }, 400, /exportSize must be 1x, 2x or 4x/],
    ['bad colour', { code: 'x', backgroundColor: 'rgba(300, 0, 0, 1)' }, 400, /backgroundColor "rgba\(300, 0, 0, 1\)" is not a colour/],
    ['colour not a string', { code: 'x', backgroundColor: 7 }, 400, /backgroundColor must be a CSS colour string/],
    ['image background', { code: 'x', backgroundMode: 'image' }, 400, /backgroundMode "image" is not supported/],
    ['unknown font', { code: 'x', fontFamily: 'Comic Sans MS' }, 400, /Unknown fontFamily "Comic Sans MS"/],
    ['font size', { code: 'x', fontSize: '200px' }, 400, /fontSize must be a length from 8px to 64px/],
    ['line height', { code: 'x', lineHeight: '20%' }, 400, /lineHeight must be a percentage from 90% to 300%/],
    ['line numbers not boolean', { code: 'x', lineNumbers: 'yes' }, 400, /lineNumbers must be true or false/],
    ['first line number', { code: 'x', firstLineNumber: -1 }, 400, /firstLineNumber must be from 0 to 1000000/],
    ['shadow offset', { code: 'x', dropShadowOffsetY: '500px' }, 400, /dropShadowOffsetY must be a length from 0px to 100px/],
    ['unknown language', { code: 'x', language: 'klingon' }, 400, /Unknown language "klingon"/],
    ['width too narrow for the padding', { code: 'x', widthAdjustment: false, width: 300, paddingHorizontal: '100px' }, 400, /width 300 leaves less than 120px/],
    ['too many bytes', { code: 'x'.repeat(32 * 1024 + 1) }, 413, /limit is 32768 bytes \(32 KiB\)/],
    ['too many pixels', { code: 'x\n'.repeat(1000), language: 'text', exportSize: '4x' }, 413, /more than the 40-megapixel limit; use a smaller exportSize/],
    ['body not an object', [1, 2], 400, /must be a JSON object/],
  ]
  for (const [name, body, status, message] of cases) {
    for (const accept of ['image/png', 'application/json']) {
      const res = await post(body, { accept })
      assert.is(res.status, status, `${name} (${accept})`)
      assert.is(res.body.status, 'error', name)
      assert.is(res.body.data, null, name)
      assert.match(res.body.message, message, name)
    }
  }
  const malformed = await server.request('POST', '/api/carbon', { raw: '{nope', headers: { 'content-type': 'application/json', accept: 'application/json' } })
  assert.is(malformed.status, 400)
  assert.equal(stored(), [])
})

test("answers PNG bytes by default, with carbon's option formats", async () => {
  const res = await post({
    code: CODE,
    language: 'rust',
    theme: 'dracula',
    backgroundColor: 'rgba(74,144,226,1)',
    windowTheme: 'sharp',
    paddingVertical: '32px',
    paddingHorizontal: '48px',
    dropShadow: false,
    lineNumbers: true,
    fontFamily: 'Ubuntu Mono',
    exportSize: '1x',
    watermark: true,
  })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/png')
  assert.is(res.headers.get('x-code-language'), 'rust')
  assert.is(res.headers.get('x-font-family'), 'JetBrains Mono')
  const image = await decode(res.body)
  assert.is(image.width, Number(res.headers.get('x-image-width')))
  assert.is(image.height, Number(res.headers.get('x-image-height')))
  assert.ok(near(image.pixel(1, 1), { r: 74, g: 144, b: 226 }, 0))
  assert.ok(near(image.pixel(48, 32), hex('#282a36'), 1), 'sharp corner in dracula\'s background')
  assert.equal(stored(), [], 'an image answer stores nothing')
})

test('with Accept: application/json it stores the PNG under uploads/carbon and serves it; the same request reuses it', async () => {
  const body = { code: CODE, theme: 'nord', exportSize: '1x' }
  const res = await post(body, { accept: 'application/json' })
  assert.is(res.status, 200)
  assert.is(res.body.message, 'Carbon image created')
  assert.match(res.body.path, /^uploads\/carbon\/[A-Za-z0-9_-]{24}\.png$/)
  assert.is(res.body.url, `${server.url}/${res.body.path}`)
  const file = path.join(server.dataDir, res.body.path)
  const image = await decode(readFileSync(file))
  assert.is(image.width, res.body.width)
  assert.is(image.height, res.body.height)
  const served = await fetch(res.body.url)
  assert.is(served.status, 200)
  assert.is(served.headers.get('content-type'), 'image/png')
  assert.is(Buffer.compare(Buffer.from(await served.arrayBuffer()), readFileSync(file)), 0)
  // Aliases and defaults resolve to the same job: the same file.
  const again = await post({ ...body, theme: 'Nord', paddingVertical: '56px' }, { accept: 'application/json' })
  assert.is(again.body.path, res.body.path)
  assert.is(stored().length, 1)
})

test.run()
