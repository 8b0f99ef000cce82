import { createHash } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CODE_IMAGE_THEMES, codeImageInput, type CodeImageInput } from '../../src/shared/schemas/codeimage.js'
import { Renderer } from '../../src/server/codeimage/renderer.js'
import { toRenderJob } from '../../src/server/codeimage/validate.js'
import { LINE_HEIGHT, WINDOW } from '../../src/server/codeimage/scene.js'
import { THEMES } from '../../src/server/codeimage/themes.js'
import { SNIPPET, decode, hex, near } from './helpers.js'

let renderer: Renderer
test.before(async () => {
  renderer = await Renderer.create()
})

const render = (input: CodeImageInput) => renderer.render(toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, ...input })))

test('defaults: a 2x PNG of the candy theme in dark mode with padding 64', async () => {
  const out = await render({})
  const image = await decode(out.data)
  assert.is(out.format, 'png')
  assert.is(image.width, out.width)
  assert.is(image.height, out.height)
  assert.ok(near(image.pixel(1, 1), hex(THEMES.candy.from), 16), 'top-left corner shows the gradient start')
  assert.ok(near(image.pixel(image.width - 2, image.height - 2), hex(THEMES.candy.to), 16), 'bottom-right corner shows the gradient end')
  assert.is(out.language, 'javascript')
})

test('dimensions follow padding and scale', async () => {
  const p64 = await decode((await render({ padding: 64, scale: 1 })).data)
  const p128 = await decode((await render({ padding: 128, scale: 1 })).data)
  const p16x3 = await decode((await render({ padding: 16, scale: 3 })).data)
  assert.is(p128.width - p64.width, 128)
  assert.is(p128.height - p64.height, 128)
  assert.is(p16x3.width, (p64.width - 96) * 3)
  assert.is(p16x3.height, (p64.height - 96) * 3)
})

test('dark mode is darker than light mode', async () => {
  for (const theme of ['candy', 'ice', 'noir'] as const) {
    const dark = await decode((await render({ theme, darkMode: true, scale: 1 })).data)
    const light = await decode((await render({ theme, darkMode: false, scale: 1 })).data)
    assert.ok(dark.meanLuminance < light.meanLuminance - 10, `${theme}: dark ${dark.meanLuminance} vs light ${light.meanLuminance}`)
  }
})

test('every theme renders, with its own gradient, and no two look the same', async () => {
  const seen = new Map<string, string>()
  for (const theme of CODE_IMAGE_THEMES) {
    const out = await render({ theme, scale: 1 })
    const image = await decode(out.data)
    assert.ok(near(image.pixel(0, 0), hex(THEMES[theme].from), 16), `${theme}: corner is its gradient's start`)
    const digest = createHash('sha256').update(image.data).digest('hex')
    assert.not.ok(seen.has(digest), `${theme} looks the same as ${seen.get(digest)}`)
    seen.set(digest, theme)
  }
})

test('without the background the corners are transparent and the window is opaque', async () => {
  const out = await render({ background: false, scale: 1, padding: 32 })
  const image = await decode(out.data)
  assert.is(image.pixel(0, 0).a, 0)
  assert.is(image.pixel(image.width - 1, image.height - 1).a, 0)
  assert.is(image.pixel(image.width / 2, image.height / 2).a, 255)
  const withBackground = await decode((await render({ scale: 1, padding: 32 })).data)
  assert.is(withBackground.pixel(0, 0).a, 255)
})

test('line numbers add width', async () => {
  const code = 'x'.repeat(80)
  const plain = await render({ codeSnippet: code, scale: 1 })
  const numbered = await render({ codeSnippet: code, scale: 1, lineNumbers: true })
  assert.ok(numbered.width > plain.width, `${numbered.width} > ${plain.width}`)
})

test('highlighted lines get a band and a bar', async () => {
  const padding = 32
  const rowY = (line: number) => padding + WINDOW.header + (line - 0.5) * 15 * LINE_HEIGHT
  const plain = await decode((await render({ scale: 1, padding })).data)
  const marked = await decode((await render({ scale: 1, padding, highlightLines: '2-3' })).data)
  const bar = hex(THEMES.candy.dark.keyword)
  assert.ok(near(marked.pixel(padding + 1, rowY(2)), bar, 20), 'bar on line 2')
  assert.ok(near(marked.pixel(padding + 1, rowY(3)), bar, 20), 'bar on line 3')
  assert.not.ok(near(marked.pixel(padding + 1, rowY(5)), bar, 20), 'no bar on line 5')
  const x = marked.width - padding - 6
  assert.ok(marked.pixel(x, rowY(2)).r > plain.pixel(x, rowY(2)).r, 'the band lightens the dark window')
})

test('maxWidth wraps long lines instead of widening the image', async () => {
  const code = 'const words = ' + JSON.stringify('lorem ipsum dolor sit amet '.repeat(8))
  const wide = await render({ codeSnippet: code, scale: 1 })
  const capped = await render({ codeSnippet: code, scale: 1, maxWidth: 600 })
  assert.ok(wide.width > 600)
  assert.ok(capped.width <= 600, `width ${capped.width}`)
  assert.ok(capped.height > wide.height)
})

test('an SVG answer draws glyphs as paths and needs no font', async () => {
  const out = await render({ format: 'svg', title: 'a <b> & c' })
  const svg = new TextDecoder().decode(out.data)
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/)
  assert.not.match(svg, /<text/)
  assert.match(svg, /<title>a &lt;b&gt; &amp; c<\/title>/)
  assert.match(svg, /<use href="#g0-\d+"/)
})

test('symbols and CJK fall back to their fonts instead of empty boxes', async () => {
  // CJK characters are a full em wide, two Latin letters 1.2 em: the fallback's own advances set the width.
  const ascii = await render({ codeSnippet: '// ' + 'ab'.repeat(40), scale: 1, wrap: false })
  const cjk = await render({ codeSnippet: '// ' + '中文'.repeat(40), scale: 1, wrap: false })
  assert.is(cjk.width - ascii.width, Math.ceil(40 * 0.8 * 15))
  const svg = new TextDecoder().decode((await render({ codeSnippet: '// 中文 ★', format: 'svg' })).data)
  assert.match(svg, /id="g2-\d+"/, 'CJK glyphs come from the third font')
  assert.match(svg, /id="g1-\d+"/, 'the star comes from the symbol font')
})

test('the snippet is limited in pixels as well as in bytes', async () => {
  try {
    // Within the byte and line limits: 900 lines of 30 characters.
    await render({ codeSnippet: Array.from({ length: 900 }, () => 'x'.repeat(30)).join('\n'), scale: 6 })
    assert.unreachable('should refuse')
  } catch (error) {
    assert.is((error as { status: number }).status, 413)
    assert.match((error as Error).message, /megapixel limit/)
  }
})

test.run()
