/**
 * Code images past ray.so (issue #19), through POST /api/codeimage, decoding the images: detected
 * one-liners in colour, scripts beyond CJK, scale 6, the bundled fonts, background colour and
 * picture, hidden window controls, the default maximum width.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CODE_FONTS, DEFAULT_MAX_WIDTH } from '../../src/shared/schemas/codeimage.js'
import { FontStack } from '../../src/server/codeimage/fonts.js'
import { WINDOW } from '../../src/server/codeimage/scene.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { decode, differs, hex, near, offLinePixels } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) => server.request('POST', '/api/codeimage', { body, headers })

async function image(body: Record<string, unknown>) {
  const res = await post(body)
  assert.is(res.status, 200, JSON.stringify(res.body?.message ?? ''))
  return { ...(await decode(res.body)), language: res.headers.get('x-code-language') }
}

/** The window's inside below the title bar, at scale 1 with padding P (no background: the window is #161616). */
const codeArea = (img: { width: number; height: number }, P: number) => ({ x: P + 4, y: P + WINDOW.header, w: img.width - 2 * P - 8, h: img.height - 2 * P - WINDOW.header - 4 })

test('one-liners are detected and drawn in more than the plain-text colour', async () => {
  const white = hex('#FFFFFF')
  const fill = hex('#161616')
  for (const [code, language] of [['console.log(42)', 'javascript'], ['let x = 5;', 'javascript'], ['print("hi")', 'python'], ['SELECT 1;', 'sql']]) {
    const common = { codeSnippet: code, background: false, padding: 16, scale: 1 }
    const detected = await image(common)
    assert.is(detected.language, language, code)
    const plain = await image({ ...common, language: 'text' })
    assert.ok(offLinePixels(plain, fill, white, codeArea(plain, 16)) < 3, `${code}: plain text is white on the window`)
    assert.ok(offLinePixels(detected, fill, white, codeArea(detected, 16)) > 20, `${code}: highlighted in colour`)
  }
})

test('Hangul, Arabic, Hebrew, Devanagari and Thai draw their own glyphs, not the missing-glyph box', async () => {
  const draw = async (text: string) => image({ codeSnippet: text, language: 'text', background: false, padding: 16, scale: 2 })
  // No bundled font has U+10FFFD: it is drawn as the missing-glyph box.
  const missing = await draw('\u{10FFFD}')
  for (const [script, a, b] of [['Hangul', '한', '글'], ['Arabic', 'ب', 'س'], ['Hebrew', 'ש', 'ל'], ['Devanagari', 'न', 'म'], ['Thai', 'ก', 'ส']]) {
    const first = await draw(a)
    const second = await draw(b)
    assert.ok(differs(first, missing), `${script} ${a} is not the box`)
    assert.ok(differs(second, missing), `${script} ${b} is not the box`)
    assert.ok(differs(first, second), `${script}: two letters, two shapes`)
  }
})

test('scale goes up to 6: 6x is twice 3x in each dimension; 7 is refused', async () => {
  const x3 = await image({ codeSnippet: 'const x = 1', scale: 3 })
  const x6 = await image({ codeSnippet: 'const x = 1', scale: 6 })
  assert.is(x6.width, 2 * x3.width)
  assert.is(x6.height, 2 * x3.height)
  const bad = await post({ codeSnippet: 'x', scale: 7 })
  assert.is(bad.status, 400)
  assert.match(bad.body.message, /scale must be from 1 to 6/)
  const huge = await post({ codeSnippet: Array.from({ length: 300 }, () => 'x'.repeat(100)).join('\n'), scale: 6 })
  assert.is(huge.status, 413)
  assert.match(huge.body.message, /megapixel limit/)
})

test('each bundled font draws the code differently; names are read loosely; unknown ones are refused', async () => {
  const images = []
  for (const fontFamily of CODE_FONTS) images.push(await image({ codeSnippet: 'const answer = 42', scale: 1, fontFamily }))
  for (let i = 0; i < images.length; i++) {
    for (let j = i + 1; j < images.length; j++) assert.ok(differs(images[i], images[j]), `${CODE_FONTS[i]} vs ${CODE_FONTS[j]}`)
  }
  const spelled = await image({ codeSnippet: 'const answer = 42', scale: 1, fontFamily: 'Fira Code' })
  assert.not.ok(differs(spelled, images[CODE_FONTS.indexOf('fira-code')]))
  const bad = await post({ codeSnippet: 'x', fontFamily: 'Comic Sans' })
  assert.is(bad.status, 400)
  // The message names its field once (it used to read `fontFamily: Unknown fontFamily ...`).
  assert.match(bad.body.message, /^Unknown fontFamily "comic-sans"; bundled fonts: jetbrains-mono, fira-code/)
})

test('ligatures apply where the font has them', () => {
  for (const family of ['jetbrains-mono', 'fira-code', 'cascadia-code'] as const) {
    const fonts = FontStack.forFamily(family)
    for (const pair of ['=>', '!=', '->']) {
      const joined = fonts.shape(pair).glyphs.map((g) => g.id)
      const apart = [...pair].map((c) => fonts.shape(c).glyphs[0].id)
      assert.not.equal(joined, apart, `${family}: ${pair} is a ligature`)
    }
  }
  const plex = FontStack.forFamily('ibm-plex-mono')
  assert.equal(plex.shape('=>').glyphs.map((g) => g.id), ['=', '>'].map((c) => plex.shape(c).glyphs[0].id), 'IBM Plex Mono has no code ligatures')
})

test('script fonts are opened the first time their characters are drawn', () => {
  const fonts = new FontStack()
  const opened = () => fonts.fonts.filter(Boolean).length
  const before = opened()
  fonts.shape('const x = 1 // ★ 中文')
  assert.is(opened(), before, 'Latin, symbols and CJK need no script font')
  const hangul = fonts.shape('한')
  assert.is(opened(), before + 1)
  assert.is(hangul.glyphs[0].font, fonts.fonts.length - 1, 'Hangul comes from the font just opened')
  fonts.shape('שלום')
  assert.is(opened(), before + 2)
})

test('windowControls: false without a title draws no title bar (the code moves up); with a title the bar stays, free of the three dots', async () => {
  const P = 32
  const common = { codeSnippet: 'const x = 1', padding: P, scale: 1, darkMode: true }
  const withDots = await image(common)
  const bare = await image({ ...common, windowControls: false })
  const titled = await image({ ...common, windowControls: false, title: 'main.ts' })
  assert.is(withDots.height - bare.height, WINDOW.header - WINDOW.bottom, 'the bar gives way to a margin like the bottom one')
  assert.is(titled.height, withDots.height)
  WINDOW.controls.forEach((color, i) => {
    const at = [P + 22 + i * 20, P + WINDOW.header / 2] as const
    assert.ok(near(withDots.pixel(...at), hex(color), 30), `dot ${i} is drawn by default`)
    assert.not.ok(near(titled.pixel(...at), hex(color), 60), `dot ${i} is gone`)
  })
  // The left corner of the titled bar is one colour: the window's.
  const corner = titled.pixel(P + 8, P + 10)
  for (let x = P + 8; x < P + 84; x++) for (let y = P + 10; y < P + WINDOW.header - 10; y++) assert.ok(near(titled.pixel(x, y), corner, 6), `(${x}, ${y})`)
  // Without a bar the first line is drawn where the bar was: the band below the top margin holds its glyphs.
  let inked = 0
  for (let x = P + WINDOW.insetX; x < P + 120; x++) for (let y = P + WINDOW.bottom; y < P + WINDOW.header; y++) if (!near(bare.pixel(x, y), corner, 40)) inked++
  assert.ok(inked > 20, `${inked} pixels of code in the top band`)
})

test('a very long line wraps at the default maximum width; wrap: false or maxWidth: 0 draws it whole', async () => {
  const code = `const s = "${'x'.repeat(200)}"`
  const wrapped = await image({ codeSnippet: code, scale: 1 })
  assert.ok(wrapped.width <= DEFAULT_MAX_WIDTH, `${wrapped.width} px`)
  const whole = await image({ codeSnippet: code, scale: 1, wrap: false })
  assert.ok(whole.width > 200 * 8, `${whole.width} px`)
  assert.ok(whole.height < wrapped.height)
  const unlimited = await image({ codeSnippet: code, scale: 1, maxWidth: 0 })
  assert.is(unlimited.width, whole.width)
  const narrow = await image({ codeSnippet: code, scale: 1, maxWidth: 600 })
  assert.ok(narrow.width <= 600)
  const both = await post({ codeSnippet: code, wrap: false, maxWidth: 600 })
  assert.is(both.status, 400)
  assert.match(both.body.message, /wrap: false .* takes no maxWidth/)
})

test('backgroundColor: one colour fills the corners; two make the gradient; bad ones are refused', async () => {
  const solid = await image({ codeSnippet: 'let x = 5;', backgroundColor: '#123456', scale: 1 })
  assert.ok(near(solid.pixel(1, 1), hex('#123456'), 2))
  assert.ok(near(solid.pixel(solid.width - 2, solid.height - 2), hex('#123456'), 2))
  const short = await image({ codeSnippet: 'let x = 5;', backgroundColor: '#f0a', scale: 1 })
  assert.ok(near(short.pixel(1, 1), hex('#ff00aa'), 2))
  for (const value of ['#ff0000,#0000ff', 'linear-gradient(#ff0000, #0000ff)']) {
    const gradient = await image({ codeSnippet: 'let x = 5;', backgroundColor: value, scale: 1 })
    assert.ok(near(gradient.pixel(1, 1), hex('#ff0000'), 16), value)
    assert.ok(near(gradient.pixel(gradient.width - 2, gradient.height - 2), hex('#0000ff'), 16), value)
  }
  for (const [body, message] of [
    [{ backgroundColor: 'red' }, /^backgroundColor: cannot read "red"/],
    [{ backgroundColor: '#1,#2,#3' }, /backgroundColor: cannot read/],
    [{ backgroundColor: '#123456', background: false }, /background: false leaves out/],
  ] as const) {
    const res = await post({ codeSnippet: 'x', ...body })
    assert.is(res.status, 400, JSON.stringify(body))
    assert.match(res.body.message, message)
  }
})

test('backgroundImage: a stored image covers the background, read from storage; no URL is fetched', async () => {
  // A stored image that is green all round: a code image with a green background.
  const stored = await post({ codeSnippet: 'x', backgroundColor: '#00c000', scale: 1, padding: 128 }, { accept: 'application/json' })
  assert.is(stored.status, 200)
  for (const format of ['png', 'svg']) {
    const res = await post({ codeSnippet: 'let x = 5;', backgroundImage: stored.body.path, scale: 1, format })
    assert.is(res.status, 200, res.body?.message)
    const img = format === 'png' ? await decode(res.body) : await decode(await (await import('sharp')).default(res.body).png().toBuffer())
    assert.ok(near(img.pixel(2, 2), hex('#00c000'), 8), `${format}: the corner shows the picture`)
    assert.ok(near(img.pixel(img.width - 3, img.height - 3), hex('#00c000'), 8), `${format}: so does the opposite one`)
  }
  const leading = await image({ codeSnippet: 'let x = 5;', backgroundImage: `/${stored.body.path}`, scale: 1 })
  assert.ok(near(leading.pixel(2, 2), hex('#00c000'), 8))
  for (const [value, status, message] of [
    ['uploads/codeimages/AAAAAAAAAAAAAAAAAAAAAAAA.png', 404, /backgroundImage: no such file on this server/],
    ['http://127.0.0.1:9/x.png', 400, /backgroundImage must be the uploads\/\.\.\. path/],
    ['../../etc/passwd', 400, /backgroundImage must be the uploads\/\.\.\. path/],
  ] as const) {
    const res = await post({ codeSnippet: 'x', backgroundImage: value })
    assert.is(res.status, status, value)
    assert.match(res.body.message, message)
  }
})

test.run()
