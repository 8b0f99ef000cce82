/**
 * Soak: runs `plaza serve` (the built binary, its own process) under a steady mixed load for a
 * long time and reports the server's memory every interval, so a leak shows as a rising line.
 * The load is what a mobile app and an attacker send together: logins, feeds, explore, posts,
 * likes, comments, search, notifications, image uploads, code images, and refused requests
 * (bad tokens, malformed escapes, oversized bodies, truncated multipart).
 *
 *   npm run build && npx tsx bench/soak.ts [--minutes 30] [--every 30] [--concurrency 16]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import sharp from 'sharp'

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '30' }, every: { type: 'string', default: '30' }, concurrency: { type: 'string', default: '16' } } })
const MINUTES = Number(values.minutes)
const EVERY_MS = Number(values.every) * 1000
const CONCURRENCY = Number(values.concurrency)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const scratch = mkdtempSync(path.join(tmpdir(), 'plaza-soak-'))

function startServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/run.js'), 'serve', '--port', '0', '--workers', '1', '--data-dir', path.join(scratch, 'data'), '--no-rate-limits'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PLAZA_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    child.on('error', reject)
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString())
      if (match)
        resolve({
          url: match[1],
          pid: child.pid!,
          stop: () => new Promise((done) => (child.once('close', () => done()), child.kill('SIGTERM'))),
        })
    })
  })
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

function send(url: string, method: string, options: { token?: string; json?: unknown; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  let body = options.body
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers['content-type'] = 'application/json'
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        let parsed: any = null
        try {
          parsed = JSON.parse(text)
        } catch {}
        resolve({ status: res.statusCode!, body: parsed })
      })
    })
    // A refused oversized body may end in a reset; that is the server protecting itself.
    req.on('error', () => resolve({ status: 0, body: null }))
    req.end(body)
  })
}

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

function multipart(file: Buffer, truncate = false): { body: Buffer; type: string } {
  const boundary = 'soakboundary'
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="p.jpg"\r\ncontent-type: image/jpeg\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  return { body: truncate ? body.subarray(0, body.length >> 1) : body, type: `multipart/form-data; boundary=${boundary}` }
}

async function main() {
  const server = await startServer()
  const api = (p: string) => server.url + '/api/mobile' + p
  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 90, g: 140, b: 200 } } }).jpeg().toBuffer()
  const users: Array<{ id: number; token: string; email: string }> = []
  for (let i = 0; i < 40; i++) {
    const email = `soak${i}@example.com`
    const res = await send(api('/auth/register'), 'POST', { json: { username: `soak${i}`, email, password: 'correct horse', full_name: `Soak ${i}` } })
    users.push({ id: res.body.data.user.id, token: res.body.data.token, email })
  }
  const postIds: number[] = []
  let n = 0
  const pick = <T>(items: T[]) => items[n++ % items.length]
  const actions: Array<() => Promise<{ status: number }>> = [
    () => send(api('/posts/feed?limit=20'), 'GET', { token: pick(users).token }),
    () => send(api('/posts/explore'), 'GET', { token: pick(users).token }),
    async () => {
      const res = await send(api('/posts/create'), 'POST', { token: pick(users).token, json: { content: `soak post ${n} #soak #coffee` } })
      if (res.status === 201 && postIds.length < 5000) postIds.push(res.body.data.id)
      return res
    },
    () => send(api(`/interactions/like/${pick(postIds) ?? 1}`), 'POST', { token: pick(users).token }),
    () => send(api(`/interactions/comment/${pick(postIds) ?? 1}`), 'POST', { token: pick(users).token, json: { content: 'nice' } }),
    () => send(api(`/posts/detail/${pick(postIds) ?? 1}`), 'GET', { token: pick(users).token }),
    () => send(api(`/user/follow/${pick(users).id}`), 'POST', { token: pick(users).token }),
    () => send(api(`/user/profile/${pick(users).id}`), 'GET', { token: pick(users).token }),
    () => send(api('/search/all?q=coffee'), 'GET', { token: pick(users).token }),
    () => send(api('/notifications/list'), 'GET', { token: pick(users).token }),
    () => send(api('/auth/login'), 'POST', { json: { email: pick(users).email, password: 'correct horse' } }),
    () => {
      const form = multipart(photo)
      return send(api('/upload/post'), 'POST', { token: pick(users).token, body: form.body, headers: { 'content-type': form.type } })
    },
    () => send(server.url + '/api/codeimage', 'POST', { json: { code: `const n = ${n % 50}\nconsole.log(n)`, language: 'javascript' } }),
    // Refused requests: they must cost nothing that stays.
    () => send(api('/user/profile'), 'GET', { token: 'not-a-real-token' }),
    () => send(api('/user/followers/%E0'), 'GET'),
    () => send(server.url + '/trpc/auth.login', 'POST', { body: Buffer.alloc(2 * 1024 * 1024, 'a'), headers: { 'content-type': 'application/json' } }),
    () => {
      const form = multipart(photo, true)
      return send(api('/upload/comment'), 'POST', { token: pick(users).token, body: form.body, headers: { 'content-type': form.type } })
    },
    () => send(server.url + '/health', 'GET'),
  ]

  const end = Date.now() + MINUTES * 60_000
  let requests = 0
  let serverErrors = 0
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) {
      const res = await pick(actions)()
      requests++
      if (res.status >= 500) serverErrors++
    }
  })

  const started = Date.now()
  const samples: Array<{ minute: number; rss: number }> = []
  console.log(`soak: ${MINUTES} min, ${CONCURRENCY} connections, ${actions.length} kinds of request, server pid ${server.pid}`)
  console.log('| elapsed | requests | req/s | 5xx | server RSS (MiB) |')
  console.log('|---|---|---|---|---|')
  let last = { at: started, requests: 0 }
  const report = () => {
    const now = Date.now()
    const rss = rssMiB(server.pid)
    samples.push({ minute: (now - started) / 60_000, rss })
    const rate = ((requests - last.requests) * 1000) / (now - last.at)
    console.log(`| ${((now - started) / 60_000).toFixed(1)} min | ${requests} | ${rate.toFixed(0)} | ${serverErrors} | ${rss.toFixed(1)} |`)
    last = { at: now, requests }
  }
  report()
  const timer = setInterval(report, EVERY_MS)
  await Promise.all(workers)
  clearInterval(timer)
  report()

  // The trend after warm-up (the first fifth of the run): a least-squares slope, in MiB per 10 minutes.
  const warm = samples.filter((s) => s.minute >= MINUTES / 5)
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const mx = mean(warm.map((s) => s.minute))
  const my = mean(warm.map((s) => s.rss))
  const slope = warm.reduce((a, s) => a + (s.minute - mx) * (s.rss - my), 0) / warm.reduce((a, s) => a + (s.minute - mx) ** 2, 0)
  const rssAfterWarmUp = warm.map((s) => s.rss)
  console.log(
    `\nafter warm-up: RSS ${Math.min(...rssAfterWarmUp).toFixed(1)}-${Math.max(...rssAfterWarmUp).toFixed(1)} MiB, trend ${(slope * 10).toFixed(2)} MiB per 10 min; ${requests} requests, ${serverErrors} answered 5xx`,
  )
  await server.stop()
  agent.destroy()
  rmSync(scratch, { recursive: true, force: true })
}

await main()
