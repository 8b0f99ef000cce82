import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { codeImageInput, type CodeImageInput } from '../../src/shared/schemas/codeimage.js'
import { FontStack } from '../../src/server/codeimage/fonts.js'
import { Renderer } from '../../src/server/codeimage/renderer.js'
import { LINE_HEIGHT, WINDOW } from '../../src/server/codeimage/scene.js'
import { toRenderJob } from '../../src/server/codeimage/validate.js'
import { decode } from './helpers.js'

// Line 1: 🎉 at columns 0-1, "ok" at 3-4, 👍🏽 at 6-7, 🇫🇷 at 9-10, 👨‍👩‍👧 at 12-13 (an emoji takes two cells).
const SNIPPET = '🎉 ok 👍🏽 🇫🇷 👨‍👩‍👧\nab ok cd ef gh'
const EMOJI_COLUMNS = [0, 6, 9, 12]
const PADDING = 32
const FONT_SIZE = 15
const SCALE = 2

let renderer: Renderer
let cell: number
test.before(async () => {
  renderer = await Renderer.create()
  cell = new FontStack().advance('0') * FONT_SIZE
})

// Theme mono with plain text: every pixel of the code is grey, so colour can only come from emoji.
const render = (input: CodeImageInput = {}) =>
  renderer.render(
    toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, language: 'text', theme: 'mono', padding: PADDING, fontSize: FONT_SIZE, scale: SCALE, ...input })),
  )

type Image = Awaited<ReturnType<typeof decode>>

/** Device-pixel box of columns [from, to) on a line (0-based), as the scene lays code out. */
function cells(line: number, from: number, to: number) {
  const x0 = PADDING + WINDOW.insetX + from * cell
  const y0 = PADDING + WINDOW.header + line * FONT_SIZE * LINE_HEIGHT
  return { x0: Math.floor(x0 * SCALE), x1: Math.ceil((x0 + (to - from) * cell) * SCALE), y0: Math.floor(y0 * SCALE), y1: Math.ceil((y0 + FONT_SIZE * LINE_HEIGHT) * SCALE) }
}

const coloured = (p: { r: number; g: number; b: number; a: number }) => p.a > 0 && Math.max(p.r, p.g, p.b) - Math.min(p.r, p.g, p.b) > 40

function count(image: Image, box: ReturnType<typeof cells>, what: (p: ReturnType<Image['pixel']>) => boolean) {
  let n = 0
  for (let y = box.y0; y < box.y1; y++) for (let x = box.x0; x < box.x1; x++) if (what(image.pixel(x, y))) n++
  return n
}

/** Left- and rightmost columns of the bright (text) pixels inside a box. */
function inkColumns(image: Image, box: ReturnType<typeof cells>) {
  let left = Infinity
  let right = -Infinity
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) {
      const p = image.pixel(x, y)
      if (p.a > 128 && p.r > 150 && p.g > 150 && p.b > 150) {
        left = Math.min(left, x)
        right = Math.max(right, x)
      }
    }
  }
  return { left, right }
}

for (const background of [true, false]) {
  test(`emoji are drawn in colour in their two cells (${background ? 'compositor' : 'resvg, transparent'})`, async () => {
    const image = await decode((await render({ background })).data)
    for (const column of EMOJI_COLUMNS) {
      const box = cells(0, column, column + 2)
      const area = (box.x1 - box.x0) * (box.y1 - box.y0)
      assert.ok(count(image, box, coloured) > area * 0.12, `emoji at column ${column} is in colour`)
    }
    // Nowhere else in the code: the spaces, "ok" and the whole second line stay grey.
    for (const [line, from, to] of [[0, 2, 6], [0, 8, 9], [0, 11, 12], [0, 14, 20], [1, 0, 20]]) {
      assert.is(count(image, cells(line, from, to), coloured), 0, `no colour on line ${line + 1}, columns ${from}-${to}`)
    }
  })
}

test('no tofu: the emoji cells hold no outline of a missing glyph in the text colour', async () => {
  const image = await decode((await render()).data)
  // The missing-glyph box would be drawn in the foreground (white on mono): bright grey pixels.
  const tofu = (p: ReturnType<Image['pixel']>) => Math.max(p.r, p.g, p.b) - Math.min(p.r, p.g, p.b) < 12 && p.r > 150
  for (const column of [0, 6, 12]) assert.is(count(image, cells(0, column, column + 2), tofu), 0, `column ${column}`)
  // The flag has a white stripe, but only in its middle: its cells' outer edges stay clear.
  const flag = cells(0, 9, 11)
  assert.is(count(image, { ...flag, x1: flag.x0 + 6 }, tofu), 0)
  assert.is(count(image, { ...flag, x0: flag.x1 - 6 }, tofu), 0)
})

test('text after emoji stays on the grid: "ok" lines up with the "ok" of the next line', async () => {
  const image = await decode((await render()).data)
  const first = inkColumns(image, cells(0, 3, 5))
  const second = inkColumns(image, cells(1, 3, 5))
  assert.ok(Number.isFinite(first.left), 'the first line has its "ok"')
  assert.equal(first, second)
})

test('SVG answer: each emoji inlined as a nested <svg>, no <symbol>, no <use> of an emoji', async () => {
  const svg = new TextDecoder().decode((await render({ format: 'svg' })).data)
  const nested = svg.match(/<svg x="[\d.]+" y="[\d.]+" width="15" height="15" viewBox="0 0 36 36">/g) ?? []
  assert.is(nested.length, 4)
  assert.not.match(svg, /<symbol/)
  for (const use of svg.match(/<use [^>]*>/g) ?? []) assert.match(use, /href="#g\d+-\d+"/)
})

test('an emoji Twemoji lacks and text-style symbols stay text', async () => {
  // U+2764 without U+FE0F is not an emoji presentation: the font draws it; the line renders.
  const out = await render({ codeSnippet: 'x \u2764 y', format: 'svg' })
  assert.not.match(new TextDecoder().decode(out.data), /viewBox="0 0 36 36"/)
})

// 🛜 has a clipPath: drawn wholly outside a chrome tile, resvg 2.6.2 would abort the process (emoji.ts).
test('emoji in the title: drawn in colour in the bar, between the controls and the edge', async () => {
  for (const background of [true, false]) {
    const withEmoji = await decode((await render({ title: 'party 🎉🛜 time', background })).data)
    const plain = await decode((await render({ title: 'party      time', background })).data)
    // The middle of the bar (the controls sit at its left end): colour only with the emoji.
    const bar = { x0: withEmoji.width * 0.3, x1: withEmoji.width * 0.7, y0: (PADDING + 8) * SCALE, y1: (PADDING + WINDOW.header - 8) * SCALE }
    assert.ok(count(withEmoji, bar, coloured) > 100, `an emoji in the title (background ${background})`)
    assert.is(count(plain, bar, coloured), 0)
  }
})

test.run()
