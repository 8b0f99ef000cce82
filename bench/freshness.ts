/**
 * Freshness under writes: how late a new post reaches its author's followers, at 10%, 50% and 100%
 * of the measured post-create throughput, on the network bench/social.ts seeds (the same flags and
 * the same cached directory).
 *
 *   npm run build
 *   npx tsx bench/freshness.ts --users 100000 --posts 1000000 --seconds 5     # the 1M-post network
 *   npx tsx bench/freshness.ts --users 10000 --posts 100000 --seconds 5       # a smaller one
 *
 * 1. Throughput: POST /posts/create for --seconds at --connections (50), interleaved with the bare
 *    node:http baseline answering the same bytes (as bench/social.ts does), then the fan-out backlog
 *    is waited for.
 * 2. For each load (10%, 50%, 100% of that throughput; 100% is the closed loop at --connections,
 *    the others autocannon's overall rate), posts for --seconds by authors who are fanned out on
 *    write (followers between 20 and the pull threshold), and for each post two delivery times,
 *    from its create answer:
 *    - **timeline**: until the fan-out's cursor passes it, i.e. it is written into every
 *      follower's timeline (read from the database file every 5 ms, every post);
 *    - **feed**: until it is in a follower's GET /posts/feed page 1 (one post in `--sample`, that
 *      follower's feed asked at once and every 20 ms; the feed merges posts not fanned out yet, so
 *      this is what a follower sees).
 *    Then the time the backlog left at the end of the load took to drain.
 * Prints a Markdown table. Everything stays on loopback.
 */
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import Database from 'libsql'
import { capture, runRound, startBare, startPlaza, waitForFanout, type RequestSpec } from './lib/load.js'
import { mulberry32, seedNetwork } from './lib/seed.js'
import { DEFAULTS } from '../src/server/config.js'

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    posts: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: String(availableParallelism()) },
    sample: { type: 'string', default: '10' },
    loads: { type: 'string', default: '0.1,0.5,1' },
    'data-dir': { type: 'string' },
  },
})
const num = (name: keyof typeof values) => {
  const n = Number(values[name])
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} must be a positive number`)
    process.exit(2)
  }
  return n
}
const USERS = num('users')
const POSTS = num('posts')
const SEED = num('seed')
const SECONDS = num('seconds')
const CONNECTIONS = num('connections')
const WORKERS = num('workers')
const SAMPLE = Math.max(1, Math.round(num('sample')))
const LOADS = String(values.loads).split(',').map(Number).filter((n) => n > 0 && n <= 1)
const DATA_DIR = path.resolve(values['data-dir'] ?? path.join(tmpdir(), `plaza-bench-social-u${USERS}-p${POSTS}-s${SEED}`))
const API = '/api/mobile'
const log = (line: string) => process.stderr.write(line + '\n')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const fmt = (ms: number) => (Number.isNaN(ms) ? '—' : ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`)

interface Pair {
  author: number
  follower: number
}

/** Authors fanned out on write (followers between 20 and the pull threshold), each with one follower. */
function loadPairs(dbFile: string): Pair[] {
  const db = new Database(dbFile, { readonly: true })
  try {
    const authors = db
      .prepare(`SELECT id FROM users WHERE followers_count BETWEEN 20 AND ? AND id NOT IN (SELECT user_id FROM timeline_pulled_authors) LIMIT 2000`)
      .all(DEFAULTS.fanoutMaxFollowers) as Array<{ id: number }>
    const follower = db.prepare('SELECT follower_id AS id FROM follows WHERE following_id = ? LIMIT 1')
    return authors.map((a) => ({ author: a.id, follower: (follower.get(a.id) as { id: number }).id }))
  } finally {
    db.close()
  }
}

interface Delivery {
  id: number
  answeredAt: number
  timeline?: number
}

async function main() {
  const network = await seedNetwork(DATA_DIR, { users: USERS, posts: POSTS, seed: SEED })
  const pairs = loadPairs(network.dbFile)
  if (pairs.length === 0) throw new Error('no author with 20 or more followers in this network')
  const token = (userId: number) => network.tokenFor(userId)
  const rng = mulberry32(SEED * 104729 + Date.now() % 100000)
  let n = 0
  const nextPost = (): RequestSpec & { pair: Pair } => {
    const pair = pairs[Math.floor(rng() * pairs.length)]
    return {
      pair,
      method: 'POST',
      path: `${API}/posts/create`,
      headers: { authorization: `Bearer ${token(pair.author)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: `Freshness post ${++n} at ${Date.now()}, tea by the window` }),
    }
  }

  const plaza = await startPlaza(DATA_DIR, { workers: WORKERS })
  const bare = await startBare()
  const cursorDb = new Database(network.dbFile, { readonly: true })
  const cursorOf = cursorDb.prepare('SELECT post_id AS c FROM timeline_fanout WHERE id = 1')
  const lines: string[] = []
  try {
    await waitForFanout(network.dbFile)
    // 1. Throughput, interleaved with the bare baseline.
    const answer = await capture(plaza.url, nextPost())
    await bare.serve(answer)
    const round = { seconds: SECONDS, connections: CONNECTIONS, maxRequests: 10_000_000, next: () => nextPost() }
    await runRound(plaza.url, { ...round, seconds: 2 }) // warm-up, unmeasured
    await waitForFanout(network.dbFile)
    const p1 = await runRound(plaza.url, round)
    const drained1 = await waitForFanout(network.dbFile)
    const b1 = await runRound(bare.url, round)
    const perSecond = (r: autocannon.Result) => (r as unknown as { totalCompletedRequests: number }).totalCompletedRequests / (r as unknown as { wallSeconds: number }).wallSeconds
    const throughput = perSecond(p1)
    log(`post create: plaza ${throughput.toFixed(0)} req/s (backlog ${drained1.posts} posts drained in ${(drained1.ms / 1000).toFixed(1)} s), bare ${perSecond(b1).toFixed(0)} req/s`)
    lines.push(`post create throughput: Plaza ${throughput.toFixed(0)} req/s, bare ${perSecond(b1).toFixed(0)} req/s (${(perSecond(b1) / throughput).toFixed(1)}×), ${CONNECTIONS} connections, ${SECONDS} s each`)
    lines.push('')
    lines.push('| load | posts/s asked | posts/s answered | create p50 / p99 | in a follower\'s feed p50 / p99 / max (sampled) | in every timeline p50 / p99 / max | backlog at the end | drained in |')
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|')

    // 2. Each load.
    for (const load of LOADS) {
      const deliveries: Delivery[] = []
      const feedTimes: number[] = []
      const feedChecks: Promise<void>[] = []
      let pending = 0
      const poller = setInterval(() => {
        const cursor = (cursorOf.get() as { c: number }).c
        const now = performance.now()
        for (const d of deliveries) if (d.timeline === undefined && d.id <= cursor) d.timeline = now - d.answeredAt
      }, 5)
      const watchFeed = async (postId: number, follower: number, answeredAt: number) => {
        pending++
        try {
          const spec: RequestSpec = { method: 'GET', path: `${API}/posts/feed`, headers: { authorization: `Bearer ${token(follower)}` } }
          for (let tries = 0; tries < 3000; tries++) {
            const res = await capture(plaza.url, spec)
            if (res.status === 200 && (JSON.parse(res.body.toString()).data.posts as Array<{ id: number }>).some((p) => p.id === postId)) {
              feedTimes.push(performance.now() - answeredAt)
              return
            }
            await sleep(20)
          }
          log(`  post ${postId} not in follower ${follower}'s feed after 3000 tries`)
        } finally {
          pending--
        }
      }
      let created = 0
      const result = await autocannon({
        url: plaza.url,
        connections: CONNECTIONS,
        duration: SECONDS,
        ...(load < 1 ? { overallRate: Math.max(1, Math.round(throughput * load)) } : {}),
        timeout: 30,
        requests: [
          {
            setupRequest: (request: Record<string, unknown>, context: Record<string, unknown>) => {
              const spec = nextPost()
              context.pair = spec.pair
              return { ...request, method: spec.method, path: spec.path, headers: spec.headers, body: spec.body }
            },
            onResponse: (status: number, body: string, context: Record<string, unknown>) => {
              const answeredAt = performance.now()
              if (status !== 201) return
              const id = JSON.parse(body).data.id as number
              deliveries.push({ id, answeredAt })
              if (++created % SAMPLE === 0) feedChecks.push(watchFeed(id, (context.pair as Pair).follower, answeredAt))
            },
          },
        ],
      } as unknown as autocannon.Options)
      const endedAt = performance.now()
      const backlog = Math.max(0, (deliveries.at(-1)?.id ?? 0) - (cursorOf.get() as { c: number }).c)
      while (deliveries.some((d) => d.timeline === undefined) && performance.now() - endedAt < 600_000) await sleep(20)
      const drainMs = performance.now() - endedAt
      await Promise.all(feedChecks)
      clearInterval(poller)
      const timeline = deliveries.map((d) => d.timeline ?? Infinity).sort((a, b) => a - b)
      feedTimes.sort((a, b) => a - b)
      const answered = deliveries.length / SECONDS
      const latency = (result as unknown as { latency: { p50: number; p99: number } }).latency
      const row =
        `| ${Math.round(load * 100)}% | ${load < 1 ? Math.round(throughput * load) : `closed loop, ${CONNECTIONS} connections`} | ${answered.toFixed(0)} | ${latency.p50} / ${latency.p99} ms | ` +
        `${fmt(percentile(feedTimes, 50))} / ${fmt(percentile(feedTimes, 99))} / ${fmt(feedTimes.at(-1) ?? NaN)} (${feedTimes.length}) | ` +
        `${fmt(percentile(timeline, 50))} / ${fmt(percentile(timeline, 99))} / ${fmt(timeline.at(-1) ?? NaN)} | ${backlog} posts | ${(drainMs / 1000).toFixed(1)} s |`
      log(row)
      lines.push(row)
      if (pending > 0) log(`  ${pending} feed checks still pending`)
      await waitForFanout(network.dbFile)
    }
  } finally {
    cursorDb.close()
    await plaza.stop()
    await bare.stop()
  }
  console.log(`\n${USERS.toLocaleString('en')} users, ${POSTS.toLocaleString('en')} posts network (${DATA_DIR}); plaza serve --workers ${WORKERS}; ${SECONDS} s per load\n`)
  console.log(lines.join('\n'))
}

await main()
