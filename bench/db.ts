/**
 * The data layer, old path against new, in one run on one seeded file (WAL, the server's schema):
 *
 *   libsql client   @libsql/client + drizzle's libsql driver, as Plaza used it: every query on the
 *                   event loop, every statement prepared on every call (the baseline)
 *   write client    db/local-client.ts: still on the event loop, statements cached per connection
 *   inline reader   services.reads: a read-only connection on the event loop, synchronous, statements cached
 *   reader workers  services.scans: reader worker threads, statements cached per connection
 *
 * For each: a light query (a profile row by id) alone, a heavy one (a substring scan of every
 * post, as a search without an index does) alone, and the light one again while heavy ones run
 * back to back, with the event loop's delay (perf_hooks.monitorEventLoopDelay) over that phase.
 * Rounds alternate between the paths so that each sees the same machine state.
 *
 *   npx tsx bench/db.ts [posts] [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createClient } from '@libsql/client'
import { eq, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/libsql'
import { openDatabase, type ReadDb } from '../src/server/db/client.js'
import { posts, users } from '../src/server/db/schema.js'
import * as schema from '../src/server/db/schema.js'

const POSTS = Number(process.argv[2] ?? 200_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const LIGHT = 2000
const HEAVY = 10
const USERS = 1000

const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-db-'))
const database = await openDatabase({ dataDir, readers: 2 })

console.error(`seeding ${USERS} users and ${POSTS} posts...`)
await database.client.executeMultiple(`
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS})
  INSERT INTO users (username, email, full_name, password_hash, created_at) SELECT 'user' || i, 'user' || i || '@example.com', 'User ' || i, 'x', i FROM n;
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${POSTS})
  INSERT INTO posts (user_id, content, created_at) SELECT 1 + i % ${USERS}, 'post ' || i || ' ' || hex(randomblob(24)), i FROM n;
  PRAGMA wal_checkpoint(TRUNCATE);
`)

const file = path.join(dataDir, 'plaza.db')
const baseline = createClient({ url: `file:${file}`, concurrency: 8, timeout: 5000 })
await baseline.execute('PRAGMA synchronous = NORMAL')
const paths: Array<{ name: string; db: ReadDb }> = [
  { name: 'libsql client (old)', db: drizzle(baseline, { schema }) },
  { name: 'write client (main thread)', db: database.db },
  { name: 'inline reader (lookups)', db: database.reads },
  { name: 'reader workers (scans)', db: database.scans },
]

const light = (db: ReadDb, i: number) => db.select().from(users).where(eq(users.id, 1 + (i % USERS))).limit(1)
// A different needle each time, so no answer can be cached anywhere; it still reads every row.
const heavy = (db: ReadDb, i: number) =>
  db.select({ n: sql<number>`count(*)` }).from(posts).where(sql`${posts.content} like ${`%${((i * 7919) % 65536).toString(16)}zz%`}`)

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

interface Samples {
  light: number[]
  heavy: number[]
  lightDuringHeavy: number[]
  loopDelay: number[]
}

const results = new Map(paths.map(({ name }) => [name, { light: [], heavy: [], lightDuringHeavy: [], loopDelay: [] } as Samples]))

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

async function round(name: string, db: ReadDb) {
  const samples = results.get(name)!
  // Warm-up, two at a time so both reader workers start; statements get prepared.
  for (let i = 0; i < 100; i++) await Promise.all([light(db, i), light(db, i + 1)])
  for (let i = 0; i < LIGHT; i++) samples.light.push(await timed(() => light(db, i)))
  for (let i = 0; i < HEAVY; i++) samples.heavy.push(await timed(() => heavy(db, i)))

  // As in a server, each query is its own turn of the event loop (a request arriving), so a query
  // that holds the thread delays the others' turns; a light query's time counts from its arrival.
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  let heavyDone = false
  const heavies = (async () => {
    for (let i = 0; i < HEAVY; i++) {
      await nextTurn()
      await heavy(db, i)
    }
    heavyDone = true
  })()
  for (let i = 0; !heavyDone; i++) {
    samples.lightDuringHeavy.push(
      await timed(async () => {
        await nextTurn()
        await light(db, i)
      }),
    )
  }
  await heavies
  histogram.disable()
  samples.loopDelay.push(histogram.percentile(99) / 1e6, histogram.max / 1e6)
}

for (let r = 0; r < ROUNDS; r++) {
  for (const { name, db } of r % 2 ? [...paths].reverse() : paths) {
    console.error(`round ${r + 1}/${ROUNDS}: ${name}`)
    await round(name, db)
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
const ms = (value: number) => (value < 1 ? value.toFixed(3) : value < 100 ? value.toFixed(1) : value.toFixed(0))

console.log(`Data layer, ${POSTS} posts, ${ROUNDS} interleaved rounds (Node ${process.version}, ${process.platform}/${process.arch}); times in ms\n`)
console.log('| path | light p50 | light p99 | heavy p50 | light during heavy p50 | light during heavy p99 | event-loop delay p99 (max) during heavy |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
const base = results.get(paths[0].name)!
for (const { name } of paths) {
  const s = results.get(name)!
  const delayP99 = Math.max(...s.loopDelay.filter((_, i) => i % 2 === 0))
  const delayMax = Math.max(...s.loopDelay.filter((_, i) => i % 2 === 1))
  const ratio = percentile(base.light, 50) / percentile(s.light, 50)
  console.log(
    `| ${name} | ${ms(percentile(s.light, 50))} (${ratio.toFixed(2)}×) | ${ms(percentile(s.light, 99))} | ${ms(percentile(s.heavy, 50))} | ` +
      `${ms(percentile(s.lightDuringHeavy, 50))} | ${ms(percentile(s.lightDuringHeavy, 99))} | ${ms(delayP99)} (${ms(delayMax)}) |`,
  )
}

baseline.close()
await database.close()
rmSync(dataDir, { recursive: true, force: true })
