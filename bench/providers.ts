/**
 * Provider-layer benchmark: what Plaza adds on top of its provider. Each operation is timed through
 * the real server (`GET /api/imagine` on AUTOMATIC1111's protocol with a 512×512 PNG answer, and
 * `GET /api/weather` on Open-Meteo's) beside a baseline measured in the same run: the same upstream
 * calls made directly to the same loopback provider, with nothing of Plaza in between. The
 * difference is the layer (undici pool, retries bookkeeping, checks) plus, for images, the sniffing
 * and the re-encoding every provider image goes through.
 *
 *   npx tsx bench/providers.ts [runs]
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { startTestServer } from '../test/helpers/server.js'
import { medianMs } from './lib/timing.js'

const RUNS = Number(process.argv[2] ?? 30)


/** A 512×512 image with gradients and noise, the size a Stable Diffusion 1.5 answer has. */
async function generated(): Promise<string> {
  const side = 512
  const raw = Buffer.alloc(side * side * 3)
  for (let i = 0; i < raw.length; i++) raw[i] = ((i * 2654435761) >>> 26) + ((i / 3) % side) / 4
  return (await sharp(raw, { raw: { width: side, height: side, channels: 3 } }).png().toBuffer()).toString('base64')
}

const image = await generated()
const forecastBody = JSON.stringify({
  timezone: 'Europe/Berlin',
  current: { time: '2026-11-23T14:00', temperature_2m: 4, relative_humidity_2m: 81, apparent_temperature: 1, weather_code: 63, wind_speed_10m: 15, wind_direction_10m: 250 },
  daily: {
    time: Array.from({ length: 7 }, (_, i) => `2026-11-${23 + i}`),
    weather_code: [0, 1, 2, 3, 61, 63, 95],
    temperature_2m_max: [6, 7, 8, 9, 10, 11, 12],
    temperature_2m_min: [-1, 0, 1, 2, 3, 4, 5],
    precipitation_sum: [0, 0, 1, 2, 0, 0, 0],
    sunrise: Array(7).fill('07:41'),
    sunset: Array(7).fill('16:02'),
  },
})
const txt2img = JSON.stringify({ images: [image], parameters: {}, info: '{}' })
const upstream = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const path = req.url!.split('?')[0]
    const body = path.endsWith('/txt2img') ? txt2img : path.endsWith('/search') ? JSON.stringify({ results: [{ name: 'Berlin', country: 'Germany', latitude: 52.52, longitude: 13.41, timezone: 'Europe/Berlin' }] }) : forecastBody
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
  })
})
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
const server = await startTestServer({ env: { PLAZA_IMAGES_BASE_URL: base, PLAZA_IMAGES_PROTOCOL: 'automatic1111', PLAZA_WEATHER_BASE_URL: base, PLAZA_WEATHER_GEOCODING_URL: base } })

const time = (run: () => Promise<void>) => medianMs(run, RUNS, 3)

const ok = async (response: Response) => {
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`)
  await response.arrayBuffer()
}

const rows: Array<[string, number, number]> = []
rows.push([
  'imagine (512×512 PNG)',
  await time(async () => ok(await fetch(`${base}/sdapi/v1/txt2img`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'bench' }) }))),
  await time(async () => ok(await fetch(`${server.url}/api/imagine?prompt=bench`))),
])
rows.push([
  'weather (geocode + forecast)',
  await time(async () => {
    await ok(await fetch(`${base}/v1/search?name=Berlin`))
    await ok(await fetch(`${base}/v1/forecast?latitude=52.52&longitude=13.41`))
  }),
  await time(async () => ok(await fetch(`${server.url}/api/weather?location=Berlin`))),
])
await server.close()
upstream.close()

console.log(`median of ${RUNS} runs, loopback provider; baseline = the same upstream calls made directly`)
console.log('operation'.padEnd(30) + 'baseline ms'.padStart(12) + 'via Plaza ms'.padStart(14) + '  × baseline')
for (const [name, direct, plaza] of rows) console.log(name.padEnd(30) + direct.toFixed(2).padStart(12) + plaza.toFixed(2).padStart(14) + `  ${(plaza / direct).toFixed(2)}`)
