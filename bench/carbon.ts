/**
 * Carbon and emoji benchmark, every figure a median measured in the same run, in one renderer that
 * has already rendered once (fonts, shiki, glyph atlas and emoji bitmaps warm, as a server's
 * workers are after `warm()`):
 *
 * 1. `POST /api/carbon`'s render of a fixed 40-line TypeScript snippet (carbon's defaults: seti,
 *    2x, drop shadow) against the plain `/api/codeimage` render of the same snippet (candy, 2x).
 * 2. The same snippet with an emoji on every line against it without emoji, for both renders.
 * 3. The carbon render with the blur drawn by resvg (the whole SVG, tokens made beforehand) against
 *    Plaza's compositor; and a transparent background (the RGBA path: resvg draws the window).
 *
 *   npx tsx bench/carbon.ts [runs]
 */
import { Resvg } from '@resvg/resvg-js'
import { carbonInput } from '../src/shared/schemas/carbon.js'
import { codeImageInput } from '../src/shared/schemas/codeimage.js'
import { toCarbonJob } from '../src/server/codeimage/carbon/options.js'
import { buildCarbonScene } from '../src/server/codeimage/carbon/scene.js'
import { FontStack, fontFiles } from '../src/server/codeimage/fonts.js'
import { Tokenizer } from '../src/server/codeimage/highlight.js'
import { Renderer, type RenderJob } from '../src/server/codeimage/renderer.js'
import { toRenderJob } from '../src/server/codeimage/validate.js'

const RUNS = Number(process.argv[2] ?? 15)
const EMOJI = ['🎉', '👍🏽', '🇫🇷', '👨‍👩‍👧', '🚀', '✅', '🔥', '1️⃣']

const lines = (withEmoji: boolean) =>
  Array.from({ length: 40 }, (_, i) => {
    const e = withEmoji ? ` ${EMOJI[i % EMOJI.length]}` : ''
    return [
      `export async function load${i}(id: string): Promise<Item | null> {`,
      `  const response = await fetch(\`https://api.example.com/items/\${id}?v=${i}\`)`,
      `  if (!response.ok) throw new Error('failed${e}: ' + response.status)`,
      `  const body = (await response.json()) as { item?: Item }`,
      `  // cache for ${i} seconds, then ask again${e}`,
      `  cache.set(id, { value: body.item ?? null, until: Date.now() + ${i * 1000} })`,
      `  return body.item ?? null // done${e}`,
      `}`,
    ][i % 8]
  }).join('\n')

const PLAIN = lines(false)
const WITH_EMOJI = lines(true)

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const codeimageJob = (code: string): RenderJob => toRenderJob(codeImageInput.parse({ codeSnippet: code, language: 'typescript', title: 'load.ts' }))
const carbonJob = (code: string): RenderJob => toCarbonJob(carbonInput.parse({ code, language: 'typescript' }))

const renderer = await Renderer.create()
// Interleaved, so that a slower moment of a shared machine falls on every kind alike.
const kinds: Record<string, (i: number) => Promise<unknown>> = {
  'codeimage': (i) => renderer.render({ ...codeimageJob(PLAIN), code: PLAIN + `\n// run ${i}` }),
  'codeimage + emoji': (i) => renderer.render({ ...codeimageJob(WITH_EMOJI), code: WITH_EMOJI + `\n// run ${i}` }),
  'carbon': (i) => renderer.render({ ...carbonJob(PLAIN), code: PLAIN + `\n// run ${i}` }),
  'carbon + emoji': (i) => renderer.render({ ...carbonJob(WITH_EMOJI), code: WITH_EMOJI + `\n// run ${i}` }),
  'carbon, transparent background': (i) =>
    renderer.render({ ...toCarbonJob(carbonInput.parse({ code: PLAIN, language: 'typescript', backgroundColor: 'transparent' })), code: PLAIN + `\n// run ${i}` }),
}
// Hack is drawn with DejaVu Sans Mono; the tokens are made once (so this one leaves out shiki's share).
const [jetbrains, dejavu, cjk] = fontFiles()
const fonts = new FontStack([dejavu, jetbrains, cjk])
const tokens = await (await Tokenizer.create()).tokenize(PLAIN, 'typescript')
const look = (carbonJob(PLAIN) as Extract<RenderJob, { kind: 'carbon' }>).look
kinds['carbon, resvg draws all (blur)'] = async () => {
  const scene = buildCarbonScene(fonts, tokens, look, 2)
  new Resvg(scene.svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().asPng()
}

const sizes: Record<string, string> = {}
for (const [name, run] of Object.entries(kinds)) {
  const out = (await run(-1)) as { width?: number; height?: number } | undefined
  if (out?.width) sizes[name] = `${out.width}x${out.height}`
}
const times: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((name) => [name, []]))
for (let i = 0; i < RUNS; i++) {
  for (const [name, run] of Object.entries(kinds)) {
    const started = performance.now()
    await run(i)
    times[name].push(performance.now() - started)
  }
}
const m = Object.fromEntries(Object.entries(times).map(([name, t]) => [name, median(t)]))
console.log(`snippet: 40 lines of TypeScript (emoji variant: one on 3 lines of every 8), PNG 2x, ${RUNS} runs, medians`)
for (const name of Object.keys(kinds)) console.log(`${name.padEnd(32)} ${m[name].toFixed(1).padStart(7)} ms  ${sizes[name] ?? ''}`)
console.log(`carbon / codeimage:              ${(m.carbon / m.codeimage).toFixed(2)}x`)
console.log(`emoji cost, codeimage:           ${(m['codeimage + emoji'] / m.codeimage).toFixed(2)}x`)
console.log(`emoji cost, carbon:              ${(m['carbon + emoji'] / m.carbon).toFixed(2)}x`)
console.log(`carbon compositor vs resvg blur: ${(m['carbon, resvg draws all (blur)'] / m.carbon).toFixed(1)}x faster`)
