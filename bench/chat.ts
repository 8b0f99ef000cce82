/**
 * The latency the chat gateway adds: the same request sent straight to a loopback
 * OpenAI-compatible upstream, and through Plaza's /api/v1/chat/completions to that upstream,
 * interleaved in one run so both see the same machine state. Reports median and p95 of each and
 * the difference. Run: npx tsx bench/chat.ts [iterations]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Pool } from 'undici'
import { createApp } from '../src/server/app.js'
import { loadConfig } from '../src/server/config.js'
import { silentLogger } from '../src/server/logger.js'
import { createServices } from '../src/server/services.js'

const ITERATIONS = Number(process.argv[2] ?? 3000)
const WARMUP = 300

const completion = JSON.stringify({
  id: 'up', object: 'chat.completion', created: 1, model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: '<think>Short.</think>Hello there, this is a typical short answer.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 },
})
const chunks = ['<think>Short.', '</think>Hello', ' there,', ' this is', ' a typical', ' short answer.'].map(
  (content) => `data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`,
)
const streamTail = `data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 } })}\n\ndata: [DONE]\n\n`

/** The upstream: answers at once, so what is measured is transport and the gateway's own work. */
const upstream = http.createServer((req, res) => {
  let body = ''
  req.on('data', (c) => (body += c))
  req.on('end', () => {
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const chunk of chunks) res.write(chunk)
      res.end(streamTail)
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) })
      res.end(completion)
    }
  })
})
upstream.keepAliveTimeout = 60_000
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`

const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-chat-'))
const config = loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: false }, { PLAZA_LLM_BASE_URL: `${upstreamUrl}/v1`, PLAZA_LLM_MODEL: 'bench' })
const services = await createServices(config, { logger: silentLogger })
const app = createApp(services)
app.server.keepAliveTimeout = 60_000
const plazaUrl = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`

const messages = [{ role: 'system', content: 'You are concise.' }, { role: 'user', content: 'Say hello in one sentence.' }]
const direct = new Pool(upstreamUrl, { connections: 1 })
const viaPlaza = new Pool(plazaUrl, { connections: 1 })

async function timed(pool: Pool, route: string, body: unknown): Promise<number> {
  const start = process.hrtime.bigint()
  const res = await pool.request({ method: 'POST', path: route, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.body.text()
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6
  if (res.statusCode !== 200 || !text.includes('Hello')) throw new Error(`bench request failed: ${res.statusCode} ${text.slice(0, 200)}`)
  return elapsed
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

async function compare(label: string, stream: boolean) {
  const directTimes: number[] = []
  const plazaTimes: number[] = []
  const directBody = { model: 'bench', messages, ...(stream ? { stream: true } : {}) }
  const plazaBody = { model: 'modelg-4o-mini', messages, ...(stream ? { stream: true } : {}) }
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    // Alternate which goes first, so neither always runs on a warmer path.
    const pair = i % 2 === 0
      ? [await timed(direct, '/v1/chat/completions', directBody), await timed(viaPlaza, '/api/v1/chat/completions', plazaBody)]
      : [NaN, NaN]
    if (i % 2 === 1) {
      pair[1] = await timed(viaPlaza, '/api/v1/chat/completions', plazaBody)
      pair[0] = await timed(direct, '/v1/chat/completions', directBody)
    }
    if (i >= WARMUP) {
      directTimes.push(pair[0])
      plazaTimes.push(pair[1])
    }
  }
  directTimes.sort((a, b) => a - b)
  plazaTimes.sort((a, b) => a - b)
  const row = (name: string, times: number[]) => `| ${label} | ${name} | ${quantile(times, 0.5).toFixed(3)} | ${quantile(times, 0.95).toFixed(3)} |`
  console.log(row('upstream directly', directTimes))
  console.log(row('through Plaza', plazaTimes))
  console.log(`| ${label} | **added by the gateway** | **${(quantile(plazaTimes, 0.5) - quantile(directTimes, 0.5)).toFixed(3)}** | **${(quantile(plazaTimes, 0.95) - quantile(directTimes, 0.95)).toFixed(3)}** |`)
}

console.log(`Node ${process.version}, ${ITERATIONS} requests each (after ${WARMUP} warm-up), one keep-alive connection per side, times in ms\n`)
console.log('| request | path | median | p95 |')
console.log('|---|---|---|---|')
await compare('non-streamed', false)
await compare('streamed (to [DONE])', true)

await direct.close()
await viaPlaza.close()
await app.close()
await new Promise<void>((resolve) => upstream.close(() => resolve()))
rmSync(dataDir, { recursive: true, force: true })
