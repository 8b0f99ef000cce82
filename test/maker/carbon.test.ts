import { Resvg } from '@resvg/resvg-js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { carbonInput, CARBON_THEMES, type CarbonInput } from '../../src/shared/schemas/carbon.js'
import { toCarbonJob, readCssColor } from '../../src/server/codeimage/carbon/options.js'
import { composeCarbon, composeCarbonRgb } from '../../src/server/codeimage/carbon/compose.js'
import { GlyphAtlas } from '../../src/server/codeimage/compose.js'
import { buildCarbonScene, CARBON_EDITOR } from '../../src/server/codeimage/carbon/scene.js'
import { CARBON_PALETTES } from '../../src/server/codeimage/carbon/themes.js'
import { FontStack } from '../../src/server/codeimage/fonts.js'
import { Renderer } from '../../src/server/codeimage/renderer.js'
import { Tokenizer } from '../../src/server/codeimage/highlight.js'
import { decode, hex, near } from '../codeimage/helpers.js'

const CODE = `const pluckDeep = key => obj => key.split('.').reduce((a, k) => a[k], obj)\n\n// compose\nconst n = 42`

let renderer: Renderer
test.before(async () => {
  renderer = await Renderer.create()
})

const render = async (input: CarbonInput = {}) => {
  const out = await renderer.render(toCarbonJob(carbonInput.parse({ code: CODE, language: 'javascript', ...input })))
  return { out, image: await decode(out.data) }
}

type Image = Awaited<ReturnType<typeof decode>>

/** The window's box in device px: it sits `padding` in from each side (unless the image is squared). */
function windowBox(image: Image, input: { paddingHorizontal?: number; paddingVertical?: number }, scale = 2) {
  const px = (input.paddingHorizontal ?? 56) * scale
  const py = (input.paddingVertical ?? 56) * scale
  return { x0: px, y0: py, x1: image.width - px, y1: image.height - py }
}

const rgb = (p: { r: number; g: number; b: number }) => ({ r: p.r, g: p.g, b: p.b })

test('defaults are carbon\'s: seti, rgba(171, 184, 195, 1), 56px padding, 2x, controls and a drop shadow', async () => {
  const { out, image } = await render({ dropShadow: false })
  const win = windowBox(image, {})
  assert.equal(rgb(image.pixel(1, 1)), { r: 171, g: 184, b: 195 })
  assert.ok(near(image.pixel(win.x0 + 8, win.y1 - 8), hex(CARBON_PALETTES.seti.background), 1), 'the window is seti\'s background')
  assert.is(out.width % 2, 0)
  const shadowed = await render({})
  // Below the window the shadow darkens the background; above it, offset 20px down, it hardly reaches.
  const below = shadowed.image.pixel(shadowed.image.width / 2, win.y1 + 40)
  assert.ok(below.r < 171 - 30, `the shadow darkens below the window (${below.r})`)
  const above = shadowed.image.pixel(shadowed.image.width / 2, win.y0 - 40)
  assert.ok(above.r > below.r + 20, `offset down: lighter above (${above.r}) than below (${below.r})`)
})

test("every theme's background is the editor's background", async () => {
  for (const theme of CARBON_THEMES) {
    const { image } = await render({ theme, dropShadow: false, backgroundColor: '#ffffff', exportSize: '1x' })
    const win = windowBox(image, {}, 1)
    const expected = parseRgba(readCssColor(CARBON_PALETTES[theme].background)!)
    // Over white: a translucent window (verminal) shows as its colour over white.
    const over = { r: expected.r * expected.a + 255 * (1 - expected.a), g: expected.g * expected.a + 255 * (1 - expected.a), b: expected.b * expected.a + 255 * (1 - expected.a) }
    assert.ok(near(image.pixel(win.x0 + 6, win.y1 - 6), over, 2), `${theme}: ${JSON.stringify(image.pixel(win.x0 + 6, win.y1 - 6))}`)
  }
})

function parseRgba(color: string) {
  const m = /^rgba\((\d+), (\d+), (\d+), ([\d.]+)\)$/.exec(color)
  if (m) return { r: +m[1], g: +m[2], b: +m[3], a: +m[4] }
  return { ...hex(color), a: 1 }
}

test('theme aliases and unknown themes', () => {
  assert.is(carbonInput.parse({ code: 'x', theme: 'Solarized-Dark' }).theme, 'solarized dark')
  assert.is(carbonInput.parse({ code: 'x', theme: 'panda' }).theme, 'panda-syntax')
  const bad = carbonInput.safeParse({ code: 'x', theme: 'rainbow' })
  assert.not.ok(bad.success)
  assert.match(bad.error!.issues[0].message, /Unknown theme "rainbow"; valid themes: 3024-night, .*seti.*zenburn/)
})

test('windowTheme none draws the three coloured controls; bw draws grey outlines and a white border', async () => {
  const none = await render({ dropShadow: false })
  const win = windowBox(none.image, {})
  const cy = win.y0 + 2 * CARBON_EDITOR.controlsY
  const colours = ['#FF5F56', '#FFBD2E', '#27C93F']
  colours.forEach((colour, i) => assert.ok(near(none.image.pixel(win.x0 + 2 * (21 + 20 * i), cy), hex(colour), 6), `control ${i + 1}`))

  const bw = await render({ windowTheme: 'bw', dropShadow: false })
  const bwWin = windowBox(bw.image, {})
  const bwY = bwWin.y0 + 2 * (CARBON_EDITOR.controlsY + 2)
  const bg = hex(CARBON_PALETTES.seti.background)
  for (let i = 0; i < 3; i++) {
    const cx = bwWin.x0 + 2 * (23 + 20 * i)
    assert.ok(near(bw.image.pixel(cx, bwY), bg, 2), `bw control ${i + 1} is hollow`)
    // The outline, 6 px from the centre: a grey (r = g = b) well above the window's colour.
    const ring = bw.image.pixel(cx + 12, bwY)
    assert.ok(ring.r > 80 && Math.abs(ring.r - ring.g) < 4 && Math.abs(ring.g - ring.b) < 4, `bw control ${i + 1} outline is grey: ${JSON.stringify(ring)}`)
  }
  assert.equal(rgb(bw.image.pixel(bwWin.x0 + 1, (bwWin.y0 + bwWin.y1) / 2)), { r: 255, g: 255, b: 255 })
  // No coloured control anywhere in the bar.
  for (let x = bwWin.x0; x < bwWin.x0 + 200; x++) {
    const p = bw.image.pixel(x, bwY)
    assert.ok(Math.max(p.r, p.g, p.b) - Math.min(p.r, p.g, p.b) < 12, `grey at x ${x}`)
  }

  const hidden = await render({ windowControls: false, dropShadow: false })
  assert.ok(hidden.image.height < none.image.height, 'no controls: no title bar')
})

test('sharp has square corners: the corner pixel is the window colour, rounded corners show the background', async () => {
  const round = await render({ dropShadow: false })
  const sharp = await render({ windowTheme: 'sharp', dropShadow: false })
  const win = windowBox(round.image, {})
  const bg = hex(CARBON_PALETTES.seti.background)
  assert.equal(rgb(round.image.pixel(win.x0, win.y0)), { r: 171, g: 184, b: 195 })
  assert.ok(near(sharp.image.pixel(win.x0, win.y0), bg, 1))
  assert.ok(near(sharp.image.pixel(win.x1 - 1, win.y1 - 1), bg, 1))
  assert.equal(rgb(sharp.image.pixel(win.x0 - 1, win.y0)), { r: 171, g: 184, b: 195 })
})

test('padding moves the window and changes the size', async () => {
  const narrow = await render({ paddingHorizontal: '20px', paddingVertical: '10px', dropShadow: false, exportSize: '1x' })
  const wide = await render({ paddingHorizontal: '80px', paddingVertical: 40, dropShadow: false, exportSize: '1x' })
  assert.is(wide.out.width - narrow.out.width, 120)
  assert.is(wide.out.height - narrow.out.height, 60)
  const bg = hex(CARBON_PALETTES.seti.background)
  const firstWindowColumn = (image: Image) => {
    const y = image.height / 2
    for (let x = 0; x < image.width; x++) if (near(image.pixel(x, y), bg, 1)) return x
    return -1
  }
  assert.is(firstWindowColumn(narrow.image), 20)
  assert.is(firstWindowColumn(wide.image), 80)
})

test('exportSize 2x doubles and 4x quadruples the 1x dimensions', async () => {
  const one = await render({ exportSize: '1x' })
  const two = await render({ exportSize: '2x' })
  const four = await render({ exportSize: '4x' })
  assert.is(two.image.width, one.image.width * 2)
  assert.is(two.image.height, one.image.height * 2)
  assert.is(four.image.width, one.image.width * 4)
  assert.is(four.image.height, one.image.height * 4)
})

test('a transparent background has alpha 0 at the corner, and the shadow still shows below the window', async () => {
  const { image } = await render({ backgroundColor: 'transparent' })
  const win = windowBox(image, {})
  assert.is(image.pixel(0, 0).a, 0)
  const flat = await render({ backgroundColor: 'transparent', dropShadow: false })
  assert.is(flat.image.pixel(flat.image.width - 1, flat.image.height - 1).a, 0)
  assert.ok(image.pixel(image.width / 2, win.y1 + 30).a > 40, 'the shadow is translucent black')
  assert.is(image.pixel(win.x0 + 8, win.y1 - 8).a, 255)
  const half = await render({ backgroundColor: 'rgba(255, 0, 0, 0.5)', dropShadow: false })
  const corner = half.image.pixel(0, 0)
  assert.ok(Math.abs(corner.a - 128) <= 1 && corner.r === 255 && corner.g === 0, JSON.stringify(corner))
})

test('line numbers fill a gutter and push the code right', async () => {
  const keyword = hex(CARBON_PALETTES.seti.palette.keyword)
  const comment = hex(CARBON_PALETTES.seti.palette.comment)
  /** Leftmost column of a colour on the first code line. */
  const leftmost = (image: Image, colour: { r: number; g: number; b: number }) => {
    const win = windowBox(image, {})
    const top = win.y0 + 2 * CARBON_EDITOR.topWithControls
    for (let x = win.x0; x < win.x1; x++) for (let y = top; y < top + 36; y++) if (near(image.pixel(x, y), colour, 10)) return x
    return -1
  }
  const plain = await render({ dropShadow: false })
  const numbered = await render({ dropShadow: false, lineNumbers: true })
  const win = windowBox(plain.image, {})
  const cell = new FontStack().advance('0') * 14 * 2
  assert.ok(Math.abs(leftmost(plain.image, keyword) - (win.x0 + 2 * CARBON_EDITOR.left)) <= 3, 'without numbers the code starts at the editor padding')
  const shift = leftmost(numbered.image, keyword) - leftmost(plain.image, keyword)
  assert.ok(Math.abs(shift - (cell + 2 * CARBON_EDITOR.gutterGap)) <= 3, `the code moves right by the gutter (${shift})`)
  const number = leftmost(numbered.image, comment)
  assert.ok(number > win.x0 && number < leftmost(numbered.image, keyword), 'the number is drawn in the gutter')
  assert.is(leftmost(plain.image, comment), -1, 'no number without lineNumbers')
})

test('the compositors match resvg drawing the whole SVG (shadow, corners, chrome, translucent window, transparent background)', async () => {
  const fonts = new FontStack()
  const atlas = new GlyphAtlas(fonts)
  const tokens = await (await Tokenizer.create()).tokenize(CODE + ' // 🎉', 'javascript')
  const cases: CarbonInput[] = [
    {},
    { exportSize: '2x', lineNumbers: true, titleBar: 'pluck.js' },
    { theme: 'verminal', backgroundColor: '#4a90e2', dropShadowOffsetY: '5px' },
    { windowTheme: 'bw', dropShadowBlurRadius: '0px', theme: 'one-light' },
    { windowTheme: 'boxy', windowControls: true, squaredImage: true },
    { windowTheme: 'sharp', windowControls: false, dropShadow: false },
    { backgroundColor: 'transparent', windowTheme: 'sharp' },
    { backgroundColor: 'rgba(255, 0, 0, 0.4)', windowTheme: 'bw' },
  ]
  for (const input of cases) {
    const job = toCarbonJob(carbonInput.parse({ code: CODE, fontFamily: 'JetBrains Mono', exportSize: '1x', ...input }))
    const scene = buildCarbonScene(fonts, tokens, job.look, job.scale)
    const reference = new Resvg(scene.svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
    const opaque = scene.layers.background.a >= 1
    const ours = opaque
      ? composeCarbonRgb(scene.layers, scene.width, scene.height, atlas, job.look.windowTheme === 'bw', job.look.windowControls || job.look.windowTheme === 'bw')
      : composeCarbon(scene.layers, scene.width, scene.height)
    const channels = opaque ? 3 : 4
    let total = 0
    let far = 0
    const pixels = scene.width * scene.height
    for (let p = 0; p < pixels; p++) {
      for (let c = 0; c < channels; c++) {
        const d = Math.abs(ours[p * channels + c] - reference[p * 4 + c])
        total += d
        if (d > 24) far++
      }
    }
    const mean = total / (pixels * channels)
    assert.ok(mean < 1, `${JSON.stringify(input)}: mean difference ${mean.toFixed(2)} levels`)
    assert.ok(far / (pixels * channels) < 0.002, `${JSON.stringify(input)}: ${far} values more than 24 levels apart`)
  }
})

test('fonts: Hack is drawn with DejaVu Sans Mono, the bundled code fonts as asked, carbon fonts Plaza lacks with JetBrains Mono, others refused', async () => {
  assert.is(toCarbonJob(carbonInput.parse({ code: 'x' })).look.font, 'dejavu-sans-mono')
  assert.is(toCarbonJob(carbonInput.parse({ code: 'x', fontFamily: 'fira code' })).look.font, 'fira-code')
  assert.is(toCarbonJob(carbonInput.parse({ code: 'x', fontFamily: 'Cascadia Code' })).look.font, 'cascadia-code')
  assert.is(toCarbonJob(carbonInput.parse({ code: 'x', fontFamily: 'ubuntu mono' })).look.font, 'jetbrains-mono')
  const hack = await render({ dropShadow: false })
  const jetbrains = await render({ dropShadow: false, fontFamily: 'JetBrains Mono' })
  const fira = await render({ dropShadow: false, fontFamily: 'Fira Code' })
  assert.is.not(Buffer.compare(hack.image.data, jetbrains.image.data), 0)
  assert.ok(fira.image.width !== jetbrains.image.width || Buffer.compare(fira.image.data, jetbrains.image.data) !== 0)
  const bad = carbonInput.safeParse({ code: 'x', fontFamily: 'Comic Sans MS' })
  assert.not.ok(bad.success)
  assert.match(bad.error!.issues[0].message, /Unknown fontFamily "Comic Sans MS"; drawn as asked: Hack, JetBrains Mono, DejaVu Sans Mono, Cascadia Code, Fira Code, IBM Plex Mono, Source Code Pro; drawn with JetBrains Mono: .*Ubuntu Mono/)
})

test('CSS colours', () => {
  assert.is(readCssColor('rgba(171, 184, 195, 1)'), '#abb8c3')
  assert.is(readCssColor('#ABC'), '#aabbcc')
  assert.is(readCssColor('#11223380'), 'rgba(17, 34, 51, 0.502)')
  assert.is(readCssColor('rgb(10 20 30 / 50%)'), 'rgba(10, 20, 30, 0.5)')
  assert.is(readCssColor('transparent'), 'rgba(0, 0, 0, 0)')
  for (const bad of ['red-ish', '#12', 'rgba(300, 0, 0, 1)', 'rgba(1, 2, 3, 2)', 'rgb(1, 2)', 'url(x)']) assert.is(readCssColor(bad), null, bad)
})

test('squaredImage makes a square image with the window centred', async () => {
  const { image } = await render({ squaredImage: true, dropShadow: false, exportSize: '1x' })
  assert.is(image.width, image.height)
})

test('emoji in carbon images: Twemoji in colour, inlined', async () => {
  const fonts = new FontStack()
  const tokens = await (await Tokenizer.create()).tokenize('ok 🎉', 'text')
  const job = toCarbonJob(carbonInput.parse({ code: 'ok 🎉', language: 'text' }))
  const scene = buildCarbonScene(fonts, tokens, job.look, job.scale)
  assert.match(scene.layers.front, /<svg x="[\d.]+" y="[\d.]+" width="14" height="14" viewBox="0 0 36 36">/)
  assert.not.match(scene.svg, /<symbol/)
  // In the title bar too, on the opaque (compositor) path.
  const titled = await render({ titleBar: 'ship it 🚀🛜', dropShadow: false })
  const win = windowBox(titled.image, {})
  let colour = 0
  for (let y = win.y0 + 20; y < win.y0 + 70; y++) {
    for (let x = titled.image.width * 0.35; x < titled.image.width * 0.65; x++) {
      const p = titled.image.pixel(x, y)
      if (Math.max(p.r, p.g, p.b) - Math.min(p.r, p.g, p.b) > 40) colour++
    }
  }
  assert.ok(colour > 100, `the rocket is drawn in the title (${colour})`)
})

test.run()
