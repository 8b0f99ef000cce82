import { Resvg } from '@resvg/resvg-js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { codeImageInput, type CodeImageInput } from '../../src/shared/schemas/codeimage.js'
import { BackdropCache, compose, GlyphAtlas } from '../../src/server/codeimage/compose.js'
import { FontStack } from '../../src/server/codeimage/fonts.js'
import { Tokenizer } from '../../src/server/codeimage/highlight.js'
import { normalizeCode } from '../../src/server/codeimage/renderer.js'
import { buildScene } from '../../src/server/codeimage/scene.js'
import { createCodeImageService } from '../../src/server/codeimage/service.js'
import { THEMES } from '../../src/server/codeimage/themes.js'
import { toRenderJob } from '../../src/server/codeimage/validate.js'
import { SNIPPET, decode } from './helpers.js'

let fonts: FontStack
let tokenizer: Tokenizer
test.before(async () => {
  fonts = new FontStack()
  tokenizer = await Tokenizer.create()
})

/** The compositor's pixels and resvg's pixels for the whole SVG of the same scene. */
async function both(input: CodeImageInput, atlas = new GlyphAtlas(fonts)) {
  const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, title: 'server.js', ...input }))
  const lines = await tokenizer.tokenize(normalizeCode(job.code), job.language ?? 'javascript')
  const scene = buildScene(fonts, lines, { ...job, theme: THEMES[job.theme], highlight: new Set(job.highlight) })
  const composed = compose(scene.layers, scene.width, scene.height, atlas)
  // `pixels` copies resvg's buffer on every read: read it once.
  const drawn = new Resvg(scene.svg(), { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
  let total = 0
  let far = 0
  for (let i = 0, j = 0; i < composed.length; i += 3, j += 4) {
    for (let c = 0; c < 3; c++) {
      const d = Math.abs(composed[i + c] - drawn[j + c])
      total += d
      if (d > 8) far++
    }
  }
  return { meanDifference: total / composed.length, farShare: far / composed.length }
}

test('the compositor paints what resvg draws from the SVG: gradient, shadow, window, chrome, bands, glyphs', async () => {
  const cases: CodeImageInput[] = [
    {},
    { darkMode: false, theme: 'ice', highlightLines: '2-3' },
    { scale: 1, padding: 16, lineNumbers: true },
    { scale: 3, padding: 128, fontSize: 13, highlightLines: [1, 5] },
    { padding: 0, codeSnippet: '// 中文 ★ → λ\nconst x = a !== b' },
  ]
  for (const input of cases) {
    const { meanDifference, farShare } = await both(input)
    // Only rounding (under a level on average) and a few glyph-edge pixels may differ.
    assert.ok(meanDifference < 1, `${JSON.stringify(input)}: mean difference ${meanDifference}`)
    assert.ok(farShare < 0.0005, `${JSON.stringify(input)}: ${(farShare * 100).toFixed(4)}% of values differ by more than 8`)
  }
})

test('the glyph atlas gives the same pixels from cached masks as from fresh ones', async () => {
  const atlas = new GlyphAtlas(fonts)
  const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET }))
  const lines = await tokenizer.tokenize(normalizeCode(job.code), 'javascript')
  const scene = buildScene(fonts, lines, { ...job, theme: THEMES[job.theme], highlight: new Set() })
  const first = Buffer.from(compose(scene.layers, scene.width, scene.height, atlas))
  const cached = atlas.size
  assert.ok(cached > 20, `${cached} masks`)
  const second = compose(scene.layers, scene.width, scene.height, atlas, Buffer.alloc(scene.width * scene.height * 3 + 99, 7))
  assert.is(atlas.size, cached)
  assert.ok(first.equals(second))
})

test('a full glyph atlas drops its least recently drawn masks and still paints the same pixels', async () => {
  const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET }))
  const lines = await tokenizer.tokenize(normalizeCode(job.code), 'javascript')
  const scene = buildScene(fonts, lines, { ...job, theme: THEMES[job.theme], highlight: new Set() })
  const roomy = Buffer.from(compose(scene.layers, scene.width, scene.height, new GlyphAtlas(fonts)))
  const small = new GlyphAtlas(fonts, 8)
  const first = Buffer.from(compose(scene.layers, scene.width, scene.height, small))
  assert.is(small.size, 8)
  assert.ok(first.equals(roomy))
  assert.ok(compose(scene.layers, scene.width, scene.height, small).equals(roomy))
  assert.is(small.size, 8)
})

test('a kept backdrop gives the same pixels as painting it, and is never reused for another title, theme or mode', async () => {
  const scene = async (input: CodeImageInput) => {
    const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, title: 'server.js', ...input }))
    const lines = await tokenizer.tokenize(normalizeCode(job.code), 'javascript')
    return buildScene(fonts, lines, { ...job, theme: THEMES[job.theme], highlight: new Set(job.highlight) })
  }
  const atlas = new GlyphAtlas(fonts)
  const painted = async (input: CodeImageInput) => {
    const s = await scene(input)
    return Buffer.from(compose(s.layers, s.width, s.height, atlas))
  }
  const cache = new BackdropCache()
  const cached = async (input: CodeImageInput) => {
    const s = await scene(input)
    return Buffer.from(compose(s.layers, s.width, s.height, atlas, undefined, cache))
  }
  const base = await painted({})
  // Kept the second time it is asked for (a size that never comes back costs no copy), used from the third.
  assert.ok((await cached({})).equals(base))
  assert.is(cache.stats.entries, 0)
  assert.ok((await cached({})).equals(base))
  assert.is(cache.stats.entries, 1)
  assert.ok((await cached({ codeSnippet: SNIPPET.replace('8080', '9090') })).equals(await painted({ codeSnippet: SNIPPET.replace('8080', '9090') })))
  // Same size, other backdrop: each is painted, not copied from the one kept.
  for (const other of [{ title: 'client.js' }, { theme: 'ice' }, { darkMode: false }, { windowControls: false }, { backgroundColor: '#112233' }] as CodeImageInput[]) {
    const expected = await painted(other)
    assert.not.ok(expected.equals(base), JSON.stringify(other))
    assert.ok((await cached(other)).equals(expected), JSON.stringify(other))
    assert.ok((await cached(other)).equals(expected), JSON.stringify(other))
  }
  assert.ok((await cached({})).equals(base))
})

test('the backdrop cache keeps at most its bytes, least recently used out first', async () => {
  const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, scale: 1 }))
  const lines = await tokenizer.tokenize(normalizeCode(job.code), 'javascript')
  const atlas = new GlyphAtlas(fonts)
  const draw = (theme: string, cache: BackdropCache) => {
    const s = buildScene(fonts, lines, { ...job, theme: THEMES[theme as 'candy'], highlight: new Set() })
    compose(s.layers, s.width, s.height, atlas, undefined, cache)
    return s.width * s.height * 3
  }
  const probe = new BackdropCache()
  const bytes = draw('candy', probe)
  const cache = new BackdropCache(bytes * 2)
  for (const theme of ['candy', 'candy', 'ice', 'ice', 'noir', 'noir']) draw(theme, cache)
  assert.equal(cache.stats, { entries: 2, bytes: bytes * 2 })
  const tooSmall = new BackdropCache(bytes - 1)
  for (let i = 0; i < 3; i++) draw('candy', tooSmall)
  assert.equal(tooSmall.stats, { entries: 0, bytes: 0 })
})

test('warm() starts the workers, and a render after it is an ordinary render', async () => {
  const service = createCodeImageService({ env: { PLAZA_CODEIMAGE_WORKERS: '1' } })
  try {
    await service.warm()
    const out = await service.render({ codeSnippet: SNIPPET, scale: 1 })
    const image = await decode(out.data)
    assert.is(image.width, out.width)
  } finally {
    await service.close()
  }
})

test.run()
