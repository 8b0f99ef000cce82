/**
 * Uploads under load: does image work starve the rest of the server? Measures login (scrypt, on
 * libuv's thread pool) and an `/uploads/...` GET (file reads, same pool) while the server is idle
 * and while 12 clients upload ~6 MB photo-like JPEGs in a loop, phases interleaved
 * idle/loaded/idle/loaded in the same run. It does so for Plaza as configured (the media queue's
 * default concurrency) and, as the baseline, with the queue opened wide
 * (PLAZA_MEDIA_CONCURRENCY=64: every upload decodes at once, as before the queue existed).
 *
 *   node --import tsx bench/uploads.ts [samples per phase, default 20]
 *
 * The server runs from the sources in its own process (this file with --serve), without rate limits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const UPLOADERS = 12

/** The server side: Plaza on an ephemeral port over `dataDir`, printing its URL. */
async function serve(dataDir: string) {
  const { createApp } = await import('../src/server/app.js')
  const { loadConfig } = await import('../src/server/config.js')
  const { silentLogger } = await import('../src/server/logger.js')
  const { createServices } = await import('../src/server/services.js')
  const config = loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: false }, process.env)
  const services = await createServices(config, { logger: silentLogger })
  const address = await createApp(services).listen(0, '127.0.0.1')
  config.port = address.port
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
}

function startServer(dataDir: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const self = fileURLToPath(import.meta.url)
  const child = spawn(process.execPath, ['--import', 'tsx', self, '--serve', dataDir], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk
      const match = /listening on (\S+)/.exec(output)
      if (match) resolve({ url: match[1], child })
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)))
  })
}

async function call(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init)
  const body = await res.arrayBuffer()
  return { status: res.status, body: Buffer.from(body) }
}

/** A photo-sized JPEG of random noise: expensive to decode and to re-encode, like a real photo. */
async function noisyJpeg(): Promise<Buffer> {
  const width = 3000
  const height = 2000
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).jpeg({ quality: 95 }).toBuffer()
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return performance.now() - start
}

interface Samples {
  login: number[]
  get: number[]
}

async function runConfiguration(name: string, env: Record<string, string>, samples: number, photo: Buffer) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-uploads-'))
  const { url, child } = await startServer(dataDir, env)
  try {
    const credentials = { username: 'bench', email: 'bench@example.com', password: 'correct horse battery', full_name: 'Bench' }
    const json = { 'content-type': 'application/json' }
    const registered = await call(`${url}/api/mobile/auth/register`, { method: 'POST', headers: json, body: JSON.stringify(credentials) })
    const token = JSON.parse(registered.body.toString()).data.token as string
    const auth = { authorization: `Bearer ${token}` }
    const form = () => {
      const data = new FormData()
      data.append('file', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'photo.jpg')
      return data
    }
    const first = JSON.parse((await call(`${url}/api/mobile/upload/post`, { method: 'POST', headers: auth, body: form() })).body.toString())
    const stored = first.data.path as string
    const login = () =>
      call(`${url}/api/mobile/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: credentials.email, password: credentials.password }) }).then((r) => {
        if (r.status !== 200) throw new Error(`login ${r.status}`)
      })
    const get = () =>
      call(`${url}/${stored}`).then((r) => {
        if (r.status !== 200) throw new Error(`GET ${r.status}`)
      })
    await login()

    const idle: Samples = { login: [], get: [] }
    const loaded: Samples = { login: [], get: [] }
    const outcomes = new Map<number, number>()
    let uploadsDone = 0
    for (const phase of ['idle', 'loaded', 'idle', 'loaded'] as const) {
      let stop = false
      let loops: Array<Promise<void>> = []
      if (phase === 'loaded') {
        let started!: () => void
        const firstDone = new Promise<void>((resolve) => (started = resolve))
        loops = Array.from({ length: UPLOADERS }, async () => {
          while (!stop) {
            const res = await call(`${url}/api/mobile/upload/post`, { method: 'POST', headers: auth, body: form() })
            outcomes.set(res.status, (outcomes.get(res.status) ?? 0) + 1)
            uploadsDone++
            started()
          }
        })
        // Measure once the server is busy: every uploader has sent, and the first has been answered.
        await firstDone
      }
      const into = phase === 'idle' ? idle : loaded
      for (let i = 0; i < samples; i++) {
        into.login.push(await timed(login))
        into.get.push(await timed(get))
      }
      stop = true
      await Promise.all(loops)
    }
    return { name, idle, loaded, uploadsDone, outcomes }
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(samples: number) {
  const photo = await noisyJpeg()
  const ms = (v: number) => `${v.toFixed(0)} ms`.padStart(8)
  console.log(`Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`)
  console.log(`Load: ${UPLOADERS} clients uploading a ${(photo.length / 2 ** 20).toFixed(1)} MB noise JPEG (3000×2000) in a loop; ${samples} samples per phase, 2 phases each\n`)
  const configurations: Array<[string, Record<string, string>]> = [
    ['media queue (default)', {}],
    ['no queue (baseline)', { PLAZA_MEDIA_CONCURRENCY: '64' }],
  ]
  for (const [name, env] of configurations) {
    const result = await runConfiguration(name, env, samples, photo)
    console.log(`${name}: ${result.uploadsDone} uploads during the loaded phases, answers ${JSON.stringify(Object.fromEntries(result.outcomes))}`)
    console.log('                 idle p50  idle p95  load p50  load p95  ratio p50  ratio p95')
    for (const what of ['login', 'get'] as const) {
      const [i50, i95, l50, l95] = [percentile(result.idle[what], 50), percentile(result.idle[what], 95), percentile(result.loaded[what], 50), percentile(result.loaded[what], 95)]
      const label = what === 'login' ? 'login' : 'GET /uploads/…'
      console.log(`  ${label.padEnd(14)} ${ms(i50)}  ${ms(i95)}  ${ms(l50)}  ${ms(l95)}  ${`${(l50 / i50).toFixed(1)}x`.padStart(9)}  ${`${(l95 / i95).toFixed(1)}x`.padStart(9)}`)
    }
    console.log()
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3])
else await main(Number(process.argv[2] ?? 20))
