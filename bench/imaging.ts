/**
 * Image-operation benchmark: the median time of each effect of `GET /api/imageFx`, expand to 16:9
 * and upscale 2x on one fixed 1024×768 photo-like JPEG, measured as the server runs them (decode,
 * operation, encode), beside a baseline measured in the same run: decode and encode with no
 * operation. Also reports the event loop's longest stall during the whole run, which stays small
 * because every stage runs on libuv's pool.
 *
 *   npx tsx bench/imaging.ts [runs]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import sharp from 'sharp'
import { IMAGE_EFFECT_NAMES } from '../src/shared/schemas/imaging.js'
import { expand, upscale } from '../src/server/catalog/imaging/canvas.js'
import { applyEffect } from '../src/server/catalog/imaging/effects.js'
import { decode, encode, type RawImage } from '../src/server/catalog/imaging/pixels.js'
import { medianMs } from './lib/timing.js'

const RUNS = Number(process.argv[2] ?? 7)
const WIDTH = 1024
const HEIGHT = 768

/** Smooth colour gradients with fine deterministic noise: compresses like a photo, not like a flat test card. */
async function photo(): Promise<Buffer> {
  const raw = Buffer.alloc(WIDTH * HEIGHT * 3)
  for (let y = 0; y < HEIGHT; y++)
    for (let x = 0; x < WIDTH; x++) {
      const i = (y * WIDTH + x) * 3
      const noise = ((i * 2654435761) >>> 27) - 16
      raw[i] = Math.max(0, Math.min(255, (x / WIDTH) * 255 + noise))
      raw[i + 1] = Math.max(0, Math.min(255, (y / HEIGHT) * 200 + 30 + noise))
      raw[i + 2] = Math.max(0, Math.min(255, 128 + 100 * Math.sin((x + y) / 60) + noise))
    }
  return sharp(raw, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).jpeg({ quality: 88 }).toBuffer()
}


const time = async (input: Buffer, operation: (image: RawImage) => Promise<RawImage>) => medianMs(async () => encode(await operation(await decode(input)), 'jpeg'), RUNS)

const input = await photo()
// The same measure over an idle pause: on a shared, loaded machine the process itself is descheduled now and then.
const idle = monitorEventLoopDelay({ resolution: 5 })
idle.enable()
await new Promise((resolve) => setTimeout(resolve, 3000))
idle.disable()
const loop = monitorEventLoopDelay({ resolution: 5 })
loop.enable()
const baseline = await time(input, async (image) => image)
const rows: Array<[string, number]> = []
for (const name of IMAGE_EFFECT_NAMES) rows.push([`imageFx ${name}`, await time(input, (image) => applyEffect(image, name))])
rows.push(['expand 16:9', await time(input, (image) => expand(image, 16 / 9))])
rows.push(['upscale 2x', await time(input, (image) => upscale(image, 2))])
loop.disable()

console.log(`${WIDTH}×${HEIGHT} JPEG in, JPEG out; median of ${RUNS} runs; sharp concurrency 1 (as in the server)`)
console.log(`baseline (decode + encode, no operation): ${baseline.toFixed(1)} ms`)
console.log('operation'.padEnd(28) + 'median ms'.padStart(10) + '  × baseline')
for (const [name, ms] of rows) console.log(name.padEnd(28) + ms.toFixed(1).padStart(10) + `  ${(ms / baseline).toFixed(2)}`)
const ms = (ns: number) => (ns / 1e6).toFixed(1)
console.log(`event loop during the run: longest stall ${ms(loop.max)} ms, p99 ${ms(loop.percentile(99))} ms, mean ${ms(loop.mean)} ms`)
console.log(`event loop idle (3 s, same process): longest stall ${ms(idle.max)} ms, p99 ${ms(idle.percentile(99))} ms, mean ${ms(idle.mean)} ms`)
