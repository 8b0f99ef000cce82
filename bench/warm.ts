/**
 * Warming a write's pages before its lock (src/server/db/warm.ts), measured: new follows on a
 * seeded network (bench/social.ts makes one) through the real `follow()`, one at a time, in rounds
 * that alternate between *cold* (no warming, as before) and *warmed* (the warming read first, on
 * its worker threads, then the follow). What is timed is `follow()` itself (the target's lookup,
 * the write transaction, the answer's profile), which is what holds the write lock plus two
 * lookups; the warming read is timed apart, as it runs outside the lock. Every follow is a new
 * pair (drawn from the network's newest notification id, which each new follow moves), so the
 * counters, notifications and timelines stay exact.
 *
 *   npx tsx bench/warm.ts [network dir] [rounds] [follows per round]
 *   (default: the 100,000-user, 1,000,000-post network bench/social.ts caches in $TMPDIR; 3 rounds of 2,000)
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { openDatabase } from '../src/server/db/client.js'
import { ReaderPool } from '../src/server/db/readers.js'
import { Coldness, noWarm, poolWarm, WARM_THREADS } from '../src/server/db/warm.js'
import { follow, followPages } from '../src/server/domain/follows.js'
import { mulberry32 } from './lib/seed.js'

const DIR = process.argv[2] || path.join(tmpdir(), 'plaza-bench-social-u100000-p1000000-s1')
const ROUNDS = Number(process.argv[3] ?? 3)
const FOLLOWS = Number(process.argv[4] ?? 2000)

const database = await openDatabase({ dataDir: DIR, readers: 1, checkpoints: true })
const { db, reads } = database
// The server's warming skips writes while their pages are found cached (warm.ts Coldness); here every warmed follow warms.
const warmers = new ReaderPool(path.join(DIR, 'plaza.db'), WARM_THREADS)
const warm = poolWarm(warmers, { coldness: new Coldness(0) })
const [{ users, newest }] = await db.all<{ users: number; newest: number }>(sql`select (select max(id) from users) as users, (select coalesce(max(id), 0) from notifications) as newest`)
const random = mulberry32(newest)

/** One round of FOLLOWS new follows; mean µs of `follow()` and of the warming read before it (0 when cold). */
async function round(warmed: boolean): Promise<{ follow: number; warm: number; made: number }> {
  let followMs = 0
  let warmMs = 0
  let made = 0
  while (made < FOLLOWS) {
    const follower = 1 + Math.floor(random() * users)
    const followee = 1 + Math.floor(random() * users)
    if (follower === followee) continue
    if (warmed) {
      const started = performance.now()
      await warm(followPages({ follower, followee }))
      warmMs += performance.now() - started
    }
    const started = performance.now()
    // No runner here: the follows' backfills stay pending (the runner's work, not the follow's).
    await follow(db, reads, noWarm, { notify() {} }, follower, followee, new Date())
    followMs += performance.now() - started
    made++
  }
  return { follow: (followMs * 1000) / made, warm: (warmMs * 1000) / made, made }
}

console.log(`${path.join(DIR, 'plaza.db')}: ${ROUNDS} rounds of ${FOLLOWS} new follows each way, alternated\n`)
console.log('| round | cold: follow() µs | warmed: warming read µs | warmed: follow() µs |')
console.log('|---|---:|---:|---:|')
for (let i = 1; i <= ROUNDS; i++) {
  const cold = await round(false)
  const warmed = await round(true)
  console.log(`| ${i} | ${cold.follow.toFixed(0)} | ${warmed.warm.toFixed(0)} | ${warmed.follow.toFixed(0)} |`)
}
await warmers.close()
await database.close()
