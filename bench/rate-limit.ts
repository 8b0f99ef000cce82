/**
 * What shared rate-limit counters cost: N hits of the database limiter (one upsert each, on a
 * real libsql file in WAL mode) against the in-memory fixed-window map it replaced, interleaved in
 * one run so both see the same machine state, plus the peek a token-carrying request pays.
 * Reports p50 and p95 per hit. Run: npx tsx bench/rate-limit.ts [hits]
 */
import { rmSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DEFAULT_RATE_LIMITS, loadConfig } from '../src/server/config.js'
import { silentLogger } from '../src/server/logger.js'
import { createServices } from '../src/server/services.js'

const HITS = Number(process.argv[2] ?? 5000)
const WARMUP = 200
const KEYS = 100

/** The previous limiter's hot path: a Map of fixed windows in this process only (the baseline). */
function memoryHit(windows: Map<string, { start: number; count: number }>, id: string, now: number, windowMs: number, max: number) {
  let window = windows.get(id)
  if (!window || now - window.start >= windowMs) windows.set(id, (window = { start: now, count: 0 }))
  window.count++
  return window.count <= max
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-'))
const services = await createServices(loadConfig({ dataDir, rateLimits: DEFAULT_RATE_LIMITS }, {}), { logger: silentLogger })
const limiter = services.limiter!
const windows = new Map<string, { start: number; count: number }>()
const timings = { memory: [] as number[], database: [] as number[], peek: [] as number[] }

for (let i = 0; i < WARMUP + HITS; i++) {
  const key = `user:${i % KEYS}`
  let start = performance.now()
  memoryHit(windows, `default:${key}`, Date.now(), 60_000, 100)
  const memory = performance.now() - start
  start = performance.now()
  await limiter.hit('default', key)
  const database = performance.now() - start
  start = performance.now()
  await limiter.peek('auth', `failed:ip:10.0.${i % KEYS}.1`)
  const peek = performance.now() - start
  if (i < WARMUP) continue
  timings.memory.push(memory)
  timings.database.push(database)
  timings.peek.push(peek)
}

await services.close()
rmSync(dataDir, { recursive: true, force: true })

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`
console.log(`${HITS} hits over ${KEYS} keys (after ${WARMUP} warm-up), p50 / p95 per hit:`)
for (const [name, values] of Object.entries(timings)) console.log(`  ${name.padEnd(9)} ${us(quantile(values, 0.5)).padStart(10)} / ${us(quantile(values, 0.95))}`)
console.log(`  database / memory at p50: ${(quantile(timings.database, 0.5) / quantile(timings.memory, 0.5)).toFixed(0)}x`)
