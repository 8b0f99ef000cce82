/**
 * What recording metrics and call statistics costs: feed throughput (GET /api/mobile/posts/feed,
 * users following 180-220) of two `plaza serve` processes on the same seeded network, one as
 * shipped and one with PLAZA_METRICS=off, measured in the same run, interleaved round by round
 * (on, off, on, off, ...), each round starting on an idle server. Prints each round and each
 * arm's req/s (requests over the rounds' total time) and the overhead in %: (off - on) / off.
 * On a machine shared with other work, throughput swings from round to round with what else
 * runs; the server processes' own CPU time per request (from /proc) is printed beside it, as it
 * hardly depends on how much CPU the machine had to give.
 *
 *   npm run build
 *   npx tsx bench/metrics.ts                                   # 10k users, 50k posts, 4 rounds of 5 s per arm
 *   npx tsx bench/metrics.ts --users 2000 --posts 20000 --rounds 3 --seconds 3
 *
 * Flags: --users, --posts, --seed, --seconds per round, --rounds per arm (at least 3), --warmup
 * seconds per arm (2), --connections (50), --workers per server (1), --first on|off (which arm
 * leads each pair, to see whether going first matters), --data-dir DIR. The network is
 * cached in $TMPDIR/plaza-bench-social-u<users>-p<posts>-s<seed> (shared with bench/social.ts).
 */
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'libsql'
import { aggregate, runRound, settle, startPlaza, type RequestSpec, type Server } from './lib/load.js'
import { mulberry32, seedNetwork } from './lib/seed.js'

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    posts: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1' },
    first: { type: 'string', default: 'on' },
    'data-dir': { type: 'string' },
  },
})
const int = (name: keyof typeof values): number => {
  const n = Number(values[name])
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a number`)
    process.exit(2)
  }
  return n
}
const USERS = int('users')
const POSTS = int('posts')
const SEED = int('seed')
const SECONDS = int('seconds')
const ROUNDS = Math.max(3, int('rounds'))
const WARMUP = int('warmup')
const CONNECTIONS = Math.max(1, int('connections'))
const WORKERS = Math.max(1, int('workers'))
const DATA_DIR = path.resolve(values['data-dir'] ?? path.join(tmpdir(), `plaza-bench-social-u${USERS}-p${POSTS}-s${SEED}`))
const log = (line: string) => process.stderr.write(line + '\n')
const rate = (n: number) => Math.round(n).toLocaleString('en')

/** Users with a full home timeline: the feed a typical signed-in user opens. */
function feedUsers(dbFile: string): number[] {
  const db = new Database(dbFile, { readonly: true })
  try {
    const ids = (sql: string) => (db.prepare(sql).all() as Array<{ id: number }>).map((row) => row.id)
    const users = ids('SELECT id FROM users WHERE following_count BETWEEN 180 AND 220 LIMIT 2000')
    return users.length > 0 ? users : ids('SELECT id FROM users ORDER BY following_count DESC LIMIT 100')
  } finally {
    db.close()
  }
}

/** CPU time (user + system) the processes have used, in milliseconds (Linux /proc; 0 elsewhere). */
function cpuMs(pids: number[]): number {
  let ticks = 0
  for (const pid of pids) {
    try {
      // The command name in (…) may hold spaces; utime and stime are the 12th and 13th fields after it.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {}
  }
  return ticks * 10 // USER_HZ is 100 on Linux
}

async function main() {
  log(`network: ${DATA_DIR}`)
  const network = await seedNetwork(DATA_DIR, { users: USERS, posts: POSTS, seed: SEED, log })
  const users = feedUsers(network.dbFile)
  const rng = mulberry32(SEED)
  const next = (): RequestSpec => ({
    method: 'GET',
    path: '/api/mobile/posts/feed',
    headers: { authorization: `Bearer ${network.tokenFor(users[Math.floor(rng() * users.length)])}` },
  })
  const probe: RequestSpec = { method: 'GET', path: '/health' }
  const options = { seconds: SECONDS, connections: CONNECTIONS, maxRequests: 10_000_000, next }

  const servers: Server[] = []
  process.once('SIGINT', () => void Promise.all(servers.map((s) => s.stop())).then(() => process.exit(130)))
  try {
    const arms = [
      { name: 'on', server: await startPlaza(DATA_DIR, { workers: WORKERS }), rounds: [] as Awaited<ReturnType<typeof runRound>>[], cpu: 0 },
      { name: 'off', server: await startPlaza(DATA_DIR, { workers: WORKERS, env: { PLAZA_METRICS: 'off' } }), rounds: [] as Awaited<ReturnType<typeof runRound>>[], cpu: 0 },
    ]
    servers.push(...arms.map((arm) => arm.server))
    const order = values.first === 'off' ? [arms[1], arms[0]] : arms
    log(`metrics on ${arms[0].server.url}, off ${arms[1].server.url}; ${users.length} feed users; ${ROUNDS} rounds of ${SECONDS} s per arm, ${CONNECTIONS} connections, ${WORKERS} worker(s) each`)
    for (const arm of arms) if (WARMUP > 0) await runRound(arm.server.url, { ...options, seconds: WARMUP })
    for (let round = 0; round < ROUNDS; round++) {
      for (const arm of order) {
        await settle(arm.server.url, probe)
        const before = cpuMs(arm.server.pids())
        const result = await runRound(arm.server.url, options)
        const cpu = cpuMs(arm.server.pids()) - before
        arm.cpu += cpu
        arm.rounds.push(result)
        const one = aggregate([result], CONNECTIONS)
        log(`  round ${round + 1} ${arm.name.padEnd(3)}: ${rate(one.perSecond)} req/s, ${((cpu * 1000) / one.requests).toFixed(0)} µs CPU per request (non-2xx ${one.non2xx}, errors ${one.errors})`)
      }
    }
    const [on, off] = arms.map((arm) => aggregate(arm.rounds, CONNECTIONS))
    const overhead = ((off.perSecond - on.perSecond) / off.perSecond) * 100
    const [onCpu, offCpu] = [arms[0].cpu / on.requests, arms[1].cpu / off.requests].map((ms) => ms * 1000)
    const cpuOverhead = ((onCpu - offCpu) / offCpu) * 100
    console.log(`\n${network.manifest.counts.users.toLocaleString('en')} users, ${network.manifest.counts.posts.toLocaleString('en')} posts; GET /api/mobile/posts/feed; ${ROUNDS} × ${SECONDS} s per arm, interleaved; ${CONNECTIONS} connections; ${WORKERS} worker(s)\n`)
    console.log('| metrics | req/s | server CPU per request | p50 ms | p99 ms | non-2xx/errors |')
    console.log('|---|---:|---:|---:|---:|---:|')
    for (const [name, m, cpu] of [['on', on, onCpu], ['off (PLAZA_METRICS=off)', off, offCpu]] as const) console.log(`| ${name} | ${rate(m.perSecond)} | ${cpu.toFixed(0)} µs | ${m.p50} | ${m.p99} | ${m.non2xx}/${m.errors} |`)
    console.log(`\noverhead of metrics and statistics: ${overhead.toFixed(1)} % of feed throughput, ${cpuOverhead.toFixed(1)} % of server CPU per request`)
    if (on.non2xx + off.non2xx + on.errors + off.errors > 0) process.exitCode = 1
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
  }
}

await main()
