/**
 * The latency the chat gateway adds: the same request sent straight to a loopback
 * OpenAI-compatible upstream, through Plaza's /api/v1/chat/completions with the gateway open,
 * through a second Plaza that requires a key (key check, allow-list, per-minute windows, token and
 * money budgets, the price table and usage recording on, its usage written every 5 s), and through
 * that one's /api/v1/responses (the Responses API translated to chat completions; `store: false`,
 * and stored for previous_response_id; and with a key without rpm/tpm, whose checks touch no
 * database), interleaved in one run so all of them see the same machine state. Reports median and p95 of each and the differences.
 * Run: npx tsx bench/chat.ts [iterations]
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

async function startPlaza() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-chat-'))
  // gpt-4o-mini: a model of the built-in price table, so every call is priced.
  const config = loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: false }, { PLAZA_LLM_BASE_URL: `${upstreamUrl}/v1`, PLAZA_LLM_MODEL: 'gpt-4o-mini' })
  const services = await createServices(config, { logger: silentLogger })
  const app = createApp(services)
  app.server.keepAliveTimeout = 60_000
  return { dataDir, services, app, url: `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}` }
}
const open = await startPlaza()
const keyed = await startPlaza()
// Every limit set, so that every check runs; none is reached.
const { key } = await (await keyed.services.gatewayAccess()).createKey({ name: 'bench', models: ['modelg-4o-mini'], rpm: 1e9, tpm: 1e9, budget_tokens: 1e15, budget_usd: 1e6 })
// The same without rpm/tpm: the per-minute windows are the part of a key's checks that reads and writes the database on each call.
const { key: windowless } = await (await keyed.services.gatewayAccess()).createKey({ name: 'bench-windowless', models: ['modelg-4o-mini'], budget_tokens: 1e15, budget_usd: 1e6 })

const messages = [{ role: 'system', content: 'You are concise.' }, { role: 'user', content: 'Say hello in one sentence.' }]
const direct = new Pool(upstreamUrl, { connections: 1 })
const viaPlaza = new Pool(open.url, { connections: 1 })
const viaKeyed = new Pool(keyed.url, { connections: 1 })

async function timed(pool: Pool, route: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const start = process.hrtime.bigint()
  const res = await pool.request({ method: 'POST', path: route, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await res.body.text()
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6
  if (res.statusCode !== 200 || !text.includes('Hello')) throw new Error(`bench request failed: ${res.statusCode} ${text.slice(0, 200)}`)
  return elapsed
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

async function compare(label: string, stream: boolean) {
  const directBody = { model: 'bench', messages, ...(stream ? { stream: true } : {}) }
  const plazaBody = { model: 'modelg-4o-mini', messages, ...(stream ? { stream: true } : {}) }
  const responsesBody = { model: 'modelg-4o-mini', instructions: 'You are concise.', input: 'Say hello in one sentence.', ...(stream ? { stream: true } : {}) }
  const auth = { authorization: `Bearer ${key}` }
  const paths = [
    () => timed(direct, '/v1/chat/completions', directBody),
    () => timed(viaPlaza, '/api/v1/chat/completions', plazaBody),
    () => timed(viaKeyed, '/api/v1/chat/completions', plazaBody, auth),
    () => timed(viaKeyed, '/api/v1/responses', { ...responsesBody, store: false }, auth),
    () => timed(viaKeyed, '/api/v1/responses', responsesBody, auth),
    () => timed(viaKeyed, '/api/v1/responses', { ...responsesBody, store: false }, { authorization: `Bearer ${windowless}` }),
  ]
  const times: number[][] = paths.map(() => [])
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    // Rotate which goes first, so none always runs on a warmer path.
    for (let j = 0; j < paths.length; j++) {
      const which = (i + j) % paths.length
      const elapsed = await paths[which]()
      if (i >= WARMUP) times[which].push(elapsed)
    }
  }
  for (const list of times) list.sort((a, b) => a - b)
  const [directTimes, plazaTimes, keyedTimes, responsesTimes, storedTimes, windowlessTimes] = times
  const row = (name: string, list: number[]) => `| ${label} | ${name} | ${quantile(list, 0.5).toFixed(3)} | ${quantile(list, 0.95).toFixed(3)} |`
  const added = (name: string, over: number[], base: number[]) =>
    `| ${label} | **${name}** | **${(quantile(over, 0.5) - quantile(base, 0.5)).toFixed(3)}** | **${(quantile(over, 0.95) - quantile(base, 0.95)).toFixed(3)}** |`
  console.log(row('upstream directly', directTimes))
  console.log(row('through Plaza, open', plazaTimes))
  console.log(row('through Plaza, with a key', keyedTimes))
  console.log(added('added by the gateway, open', plazaTimes, directTimes))
  console.log(added('added by the gateway, with a key and usage recording', keyedTimes, directTimes))
  console.log(added('of which the key and usage', keyedTimes, plazaTimes))
  console.log(row('Responses API, with a key, translated, store: false', responsesTimes))
  console.log(row('Responses API, with a key, translated, stored', storedTimes))
  console.log(added('added by the gateway, Responses API with a key (store: false)', responsesTimes, directTimes))
  console.log(added('added by the gateway, Responses API with a key (stored)', storedTimes, directTimes))
  console.log(row('Responses API, with a key without rpm/tpm, store: false', windowlessTimes))
  console.log(added('added by the gateway, Responses API with a key without rpm/tpm (store: false)', windowlessTimes, directTimes))
}

console.log(`Node ${process.version}, ${ITERATIONS} requests each (after ${WARMUP} warm-up), one keep-alive connection per side, times in ms\n`)
console.log('| request | path | median | p95 |')
console.log('|---|---|---|---|')
await compare('non-streamed', false)
await compare('streamed (to [DONE])', true)

const usage = await (await keyed.services.gatewayAccess()).usage({ days: 1 })
console.log(`\nusage recorded for the key: ${usage.map((row) => `${row.key_name} ${row.model} ${row.requests} requests, ${row.total_tokens} tokens, $${(row.cost_nanos / 1e9).toFixed(6)}`).join('; ')}`)

await direct.close()
await viaPlaza.close()
await viaKeyed.close()
for (const plaza of [open, keyed]) {
  await plaza.app.close()
  rmSync(plaza.dataDir, { recursive: true, force: true })
}
await new Promise<void>((resolve) => upstream.close(() => resolve()))
