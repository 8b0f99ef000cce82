/** The card renderers' text helpers: font fallback, wrapping (spaces, CJK, long words) and shrink-to-fit. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { fitText, fontSet, layoutLine, measure, wrap } from '../../src/server/render/text.js'
import { parseColour } from '../../src/shared/schemas/colour.js'

const sans = fontSet('sans')

test('each character takes the first font that has it; emoji become pictures; missing ones the primary .notdef', () => {
  const line = layoutLine(sans, 'a你🎉\u{10FFFD}')
  const fonts = line.items.map((item) => ('emoji' in item ? 'emoji' : item.font))
  assert.equal(fonts, [0, 1, 'emoji', 0])
  const last = line.items[3]
  assert.ok(!('emoji' in last) && last.id === 0, 'a character no font has is glyph 0')
})

test('wrap: at spaces, between CJK characters, a too-long word cut; new lines kept', () => {
  const lines = wrap(sans, 'the quick brown fox jumps over the lazy dog', measure(sans, 'the quick brown'))
  assert.equal(lines.map((l) => l.text), ['the quick brown', 'fox jumps over', 'the lazy dog'])
  const cjk = wrap(sans, '我能吞下玻璃而不伤身体', measure(sans, '我能吞下'))
  assert.equal(cjk.map((l) => l.text), ['我能吞下', '玻璃而不', '伤身体'])
  const cut = wrap(sans, 'a supercalifragilistic word', measure(sans, 'supercali'))
  assert.ok(cut.cutWords)
  assert.ok(cut.every((l) => l.width <= measure(sans, 'supercali') + 1e-9))
  assert.equal(wrap(sans, 'one\ntwo', 100).map((l) => l.text), ['one', 'two'])
})

test('fitText: shrinks before cutting a word; at the smallest size, an ellipsis', () => {
  const box = { width: 300, height: 100, maxSize: 80, minSize: 10, lineHeight: 1.1 }
  const fitted = fitText(sans, 'EXTRAORDINARILY', box)
  assert.is(fitted.lines.length, 1)
  assert.ok(fitted.size < 80 && fitted.lines[0].width * fitted.size <= 300.5)
  const overflow = fitText(sans, 'word '.repeat(400), { ...box, minSize: 20, maxSize: 20 })
  assert.ok(overflow.lines.length * 20 * 1.1 <= 100)
  assert.ok(overflow.lines[overflow.lines.length - 1].text.endsWith('…'))
})

test('colours: hex of 3 or 6 digits and CSS names, in any case; anything else refused', () => {
  assert.is(parseColour('#F0a'), '#ff00aa')
  assert.is(parseColour('12AB34'), '#12ab34')
  assert.is(parseColour('RebeccaPurple'), '#663399')
  for (const bad of ['#12345', 'blurple', 'rgb(1,2,3)', '', '#ggg']) assert.is(parseColour(bad), null, bad)
})

test.run()
