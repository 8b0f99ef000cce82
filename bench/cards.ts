/**
 * Maker card benchmark: the median time to render each operation on a fixed input (layout, SVG and
 * rasterising, as a Maker worker runs it), beside a baseline measured in the same run: resvg
 * rasterising a plain SVG of the same size (a filled background and a gradient panel, no text).
 * Also the same fakepost through the worker pool, and the event loop's longest stall meanwhile.
 *
 *   npx tsx bench/cards.ts [runs]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import sharp from 'sharp'
import { createMakerService } from '../src/server/catalog/maker/pool.js'
import { renderCard, type CardJob } from '../src/server/catalog/maker/scene.js'
import { rasterize } from '../src/server/render/rasterize.js'
import { LOGO_STYLE_NAMES } from '../src/shared/schemas/logo.js'
import { medianMs } from './lib/timing.js'

const RUNS = Number(process.argv[2] ?? 9)


const time = (run: () => unknown) => medianMs(run, RUNS)

const plain = (width: number, height: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#a58efb"/><stop offset="1" stop-color="#e9bff8"/></linearGradient></defs><rect width="${width}" height="${height}" fill="#fafafa"/><rect x="${width / 8}" y="${height / 8}" width="${(width * 3) / 4}" height="${(height * 3) / 4}" rx="24" fill="url(#g)"/></svg>`

const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#3366aa' } }).jpeg().toBuffer()
const cases: Array<[string, CardJob]> = [
  ['meme this-is-fine', { kind: 'meme', template: 'this-is-fine', top: 'Production is down', bottom: 'This is fine' }],
  ['meme distracted', { kind: 'meme', template: 'distracted', top: 'A new framework', bottom: 'The project I started' }],
  ['meme 800×600 JPEG', { kind: 'meme', template: null, image: photo, top: 'When the build passes', bottom: 'On the first try' }],
  [
    'fakepost (emoji, CJK)',
    {
      kind: 'fakepost',
      input: { text: 'Just shipped the new renderer 🚀🎉 emoji in colour, 中文也可以, and long words wrap nicely across lines.', username: 'plaza', name: 'Plaza', verified: true, likes: 1234, replies: 5, reposts: 67, theme: 'light', time: '9:41 AM · Nov 23, 2026' },
    },
  ],
  ...LOGO_STYLE_NAMES.map((style): [string, CardJob] => [`logo ${style}`, { kind: 'logo', input: { text: 'Plaza Maker', style, size: 256 } }]),
]

console.log(`median of ${RUNS} runs, in this process (as one Maker worker runs a job)`)
console.log('operation'.padEnd(26) + 'size'.padStart(11) + 'median ms'.padStart(11) + 'baseline ms'.padStart(13) + '  × baseline')
for (const [name, job] of cases) {
  const png = rasterize(await renderCard(job))
  const ms = await time(async () => rasterize(await renderCard(job)))
  const svg = plain(png.width, png.height)
  const base = await time(() => rasterize(svg))
  console.log(name.padEnd(26) + `${png.width}×${png.height}`.padStart(11) + ms.toFixed(1).padStart(11) + base.toFixed(1).padStart(13) + `  ${(ms / base).toFixed(2)}`)
}

const loop = monitorEventLoopDelay({ resolution: 5 })
const job = cases[3][1]
const maker = createMakerService(process.env)
await maker.render(job)
loop.enable()
const pooled = await time(() => maker.render(job))
loop.disable()
const fmt = (ns: number) => (ns / 1e6).toFixed(1)
console.log(`fakepost through the worker pool: median ${pooled.toFixed(1)} ms; event loop meanwhile: longest stall ${fmt(loop.max)} ms, p99 ${fmt(loop.percentile(99))} ms`)
process.exit(0)
