import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { emojiSvg, hasEmoji, splitEmoji } from '../../src/server/render/emoji.js'

test('text splits into plain runs and one run per whole emoji sequence', () => {
  assert.equal(splitEmoji('hi 👋🏽 family 👨‍👩‍👧, keycap #️⃣ flag 🇯🇵 ©'), [
    { text: 'hi ', emoji: false },
    { text: '👋🏽', emoji: true },
    { text: ' family ', emoji: false },
    { text: '👨‍👩‍👧', emoji: true },
    { text: ', keycap ', emoji: false },
    { text: '#️⃣', emoji: true },
    { text: ' flag ', emoji: false },
    { text: '🇯🇵', emoji: true },
    { text: ' ©', emoji: false },
  ])
  assert.equal(splitEmoji('plain # 1'), [{ text: 'plain # 1', emoji: false }])
  assert.equal(splitEmoji(''), [])
  assert.is(hasEmoji('no emoji here, # and 1'), false)
  assert.is(hasEmoji('yes 😀'), true)
  assert.is(hasEmoji('yes 😀'), true, 'the shared expression does not keep state between calls')
})

test("each emoji has Twemoji's SVG, whether its file name keeps U+FE0F (ZWJ sequences) or drops it", () => {
  for (const emoji of ['😀', '👋🏽', '👨‍👩‍👧', '#️⃣', '❤️', '❤', '🇯🇵', '🏃🏻‍♀️']) {
    const svg = emojiSvg(emoji)
    assert.ok(svg?.startsWith('<svg'), `an SVG for ${emoji}`)
    assert.match(svg!, /viewBox="0 0 36 36"/)
  }
  assert.is(emojiSvg('a'), undefined)
})

test.run()
