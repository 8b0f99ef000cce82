/**
 * Plaza at scale: seeds a social network (users, a skewed follow graph, posts, likes, comments,
 * hashtags, notifications, home timelines, one live session per user) straight into the schema,
 * checks every counter (and a sample of timelines against the direct feed query) with SQL, then measures the read and write endpoints of /api/mobile against a bare
 * node:http server answering the very same bytes (one real Plaza answer, captured first), in the
 * same run, interleaved Plaza, bare, Plaza, bare. Both servers are their own processes; the load
 * generator (autocannon) is this one. Prints a Markdown table: req/s, ratio, p50/p99, peak RSS.
 * Requests vary as users' do: no endpoint asks the same request twice in a row (another user,
 * post, page or query), and search draws `q` from a mix of words, pairs, prefixes, usernames and
 * hashtags; `search-cold` measures it on a Plaza with the answer cache off. How late new posts
 * reach followers under a write load: bench/freshness.ts.
 *
 *   npm run build
 *   npx tsx bench/social.ts --users 2000 --posts 20000 --seconds 3          # small: seeds in 3-50 s
 *   npx tsx bench/social.ts --users 100000 --posts 1000000 --seconds 5      # reference: 3-19 min to seed, 2.4 GB
 *
 * Flags: --users, --posts (follows = 125 x users, likes = 2 x posts, comments = 0.2 x posts unless
 * --follows/--likes/--comments), --seconds per round, --rounds (2), --warmup seconds (5: each server
 * gets that long of the endpoint's load, unmeasured, before its first round),
 * --connections (50), --max-requests per round, --workers (plaza serve processes; default one per
 * core, as `plaza serve` itself; the bare baseline is one process, as node:http is), --seed,
 * --only feed,explore,... (see ENDPOINTS), --data-dir DIR, --rate-limits SPEC (Plaza counts requests
 * as PLAZA_RATE_LIMITS=SPEC says, e.g. `auth=1000000,upload=1000000,default=1000000`: counted, never
 * refused; without it, `--no-rate-limits`). The seeded network is cached: by
 * default in $TMPDIR/plaza-bench-social-u<users>-p<posts>-s<seed>, reused (not re-seeded) on the
 * next run; writes measured by earlier runs stay in it. Everything stays on loopback.
 */
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'libsql'
import { aggregate, capture, peakRss, resetPeakRss, runRound, settle, startBare, startPlaza, waitForFanout, type Measured, type RequestSpec, type Server } from './lib/load.js'
import { mulberry32, seedNetwork, verifyNetwork, WORDS, type SeededNetwork } from './lib/seed.js'

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    posts: { type: 'string', default: '20000' },
    follows: { type: 'string' },
    likes: { type: 'string' },
    comments: { type: 'string' },
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    'max-requests': { type: 'string', default: '1000000' },
    workers: { type: 'string', default: String(availableParallelism()) },
    only: { type: 'string' },
    'data-dir': { type: 'string' },
    'rate-limits': { type: 'string' },
  },
})
const int = (name: keyof typeof values): number | undefined => {
  const raw = values[name]
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a number`)
    process.exit(2)
  }
  return n
}
const USERS = int('users')!
const POSTS = int('posts')!
const SEED = int('seed')!
const SECONDS = int('seconds')!
const ROUNDS = Math.max(1, int('rounds')!)
const WARMUP = int('warmup')!
const CONNECTIONS = Math.max(1, int('connections')!)
const MAX_REQUESTS = Math.max(CONNECTIONS, int('max-requests')!)
const WORKERS = Math.max(1, int('workers')!)
const DATA_DIR = path.resolve(values['data-dir'] ?? path.join(tmpdir(), `plaza-bench-social-u${USERS}-p${POSTS}-s${SEED}`))
const log = (line: string) => process.stderr.write(line + '\n')

/** What the endpoints draw from: users, tokens and posts picked once, from the seeded rows. */
interface Fixtures {
  network: SeededNetwork
  users: number
  feedUsers: number[]
  notifiedUsers: number[]
  publicPosts: number[]
  /**
   * The newest notification's id when the run began. Every new like and follow writes one, so it
   * moves with every run that wrote, and seeds the requests: a run on a network reused from an
   * earlier one likes and follows other pairs, rather than replaying the earlier run's, which
   * would then change nothing (both are idempotent) and cost a fraction of a real one.
   */
  writesSeed: number
  /** Usernames of a sample of users, and the hashtags in use, for search queries. */
  usernames: string[]
  hashtags: string[]
}

interface Endpoint {
  name: string
  describe: string
  next: (f: Fixtures, rng: () => number) => RequestSpec
  /** Measured on a Plaza of its own started with this environment (e.g. a cache switched off). */
  env?: Record<string, string>
}

const API = '/api/mobile'
const pickFrom = <T>(items: T[], rng: () => number): T => items[Math.floor(rng() * items.length)]
const anyUser = (f: Fixtures, rng: () => number) => 1 + Math.floor(rng() * f.users)
const bearer = (f: Fixtures, userId: number) => ({ authorization: `Bearer ${f.network.tokenFor(userId)}` })
const json = (f: Fixtures, userId: number) => ({ ...bearer(f, userId), 'content-type': 'application/json' })
let created = 0

/**
 * A search as people type them, never the same twice in a row (measure() redraws a repeat): a
 * word of the posts' vocabulary (any of them alike, so rare and common words both come), two
 * words, the first three letters of a word (typing ahead), a username or its first letters, a
 * hashtag with its #.
 */
function searchQuery(f: Fixtures, r: () => number): string {
  const word = () => pickFrom(WORDS.filter((w) => w.length >= 2), r)
  const kind = r()
  if (kind < 0.3) return word()
  if (kind < 0.5) return `${word()} ${word()}`
  if (kind < 0.7) {
    const w = pickFrom(WORDS.filter((x) => x.length >= 3), r)
    return w.slice(0, 3)
  }
  if (kind < 0.85) {
    const name = pickFrom(f.usernames, r)
    return r() < 0.5 ? name : name.slice(0, 3 + Math.floor(r() * 4))
  }
  return `#${pickFrom(f.hashtags, r)}`
}
const searchAll = (f: Fixtures, r: () => number): RequestSpec => ({ method: 'GET', path: `${API}/search/all?q=${encodeURIComponent(searchQuery(f, r))}`, headers: bearer(f, anyUser(f, r)) })

const ENDPOINTS: Endpoint[] = [
  {
    name: 'feed',
    describe: 'GET /posts/feed, users following 180-220, page 1 (4 in 5) or 2',
    next: (f, r) => ({ method: 'GET', path: `${API}/posts/feed${r() < 0.8 ? '' : '?page=2'}`, headers: bearer(f, pickFrom(f.feedUsers, r)) }),
  },
  { name: 'explore', describe: 'GET /posts/explore, page 1 (4 in 5) or 2', next: (f, r) => ({ method: 'GET', path: `${API}/posts/explore${r() < 0.8 ? '' : '?page=2'}`, headers: bearer(f, anyUser(f, r)) }) },
  { name: 'search', describe: 'GET /search/all, varied q (words, pairs, prefixes, usernames, hashtags)', next: searchAll },
  { name: 'search-cold', describe: 'GET /search/all, varied q, answer cache off (PLAZA_SEARCH_CACHE_TTL=0)', next: searchAll, env: { PLAZA_SEARCH_CACHE_TTL: '0' } },
  { name: 'notifications', describe: 'GET /notifications/list', next: (f, r) => ({ method: 'GET', path: `${API}/notifications/list`, headers: bearer(f, pickFrom(f.notifiedUsers, r)) }) },
  { name: 'profile', describe: 'GET /user/profile/{id}', next: (f, r) => ({ method: 'GET', path: `${API}/user/profile/${anyUser(f, r)}`, headers: bearer(f, anyUser(f, r)) }) },
  { name: 'post-detail', describe: 'GET /posts/detail/{id}', next: (f, r) => ({ method: 'GET', path: `${API}/posts/detail/${pickFrom(f.publicPosts, r)}`, headers: bearer(f, anyUser(f, r)) }) },
  { name: 'like', describe: 'POST /interactions/like/{id}', next: (f, r) => ({ method: 'POST', path: `${API}/interactions/like/${pickFrom(f.publicPosts, r)}`, headers: bearer(f, anyUser(f, r)) }) },
  {
    name: 'post-create',
    describe: 'POST /posts/create',
    next: (f, r) => ({ method: 'POST', path: `${API}/posts/create`, headers: json(f, anyUser(f, r)), body: JSON.stringify({ content: `Benchmark post ${++created}, morning coffee by the window #bench` }) }),
  },
  {
    name: 'follow',
    describe: 'POST /user/follow/{id}',
    next: (f, r) => {
      const a = anyUser(f, r)
      let b = anyUser(f, r)
      if (b === a) b = (b % f.users) + 1
      return { method: 'POST', path: `${API}/user/follow/${b}`, headers: bearer(f, a) }
    },
  },
]

function loadFixtures(network: SeededNetwork, rng: () => number): Fixtures {
  const db = new Database(network.dbFile, { readonly: true })
  const ids = (sql: string, ...args: unknown[]) => (db.prepare(sql).all(...args) as Array<{ id: number }>).map((row) => row.id)
  let feedUsers = ids('SELECT id FROM users WHERE following_count BETWEEN 180 AND 220 LIMIT 2000')
  if (feedUsers.length === 0) feedUsers = ids('SELECT id FROM users ORDER BY following_count DESC LIMIT 100')
  // Users with a full first page of notifications.
  const notifiedUsers = ids('SELECT id FROM users WHERE followers_count >= 50 LIMIT 2000')
  const users = network.manifest.options.users
  const posts = network.manifest.options.posts
  const sample = Array.from({ length: Math.min(20_000, posts) }, () => 1 + Math.floor(rng() * posts))
  // Posts anyone may see: public, and (since issue 49 seeds private accounts) not a private account's.
  const privateAuthors = db.prepare("SELECT 1 FROM pragma_table_info('users') WHERE name = 'is_private'").get() ? 'AND user_id NOT IN (SELECT id FROM users WHERE is_private = 1)' : ''
  const publicPosts = ids(`SELECT id FROM posts WHERE is_public = 1 ${privateAuthors} AND id IN (${sample.join(',')})`)
  const writesSeed = (db.prepare('SELECT coalesce(max(id), 0) AS id FROM notifications').get() as { id: number }).id
  const userSample = Array.from({ length: Math.min(2000, users) }, () => 1 + Math.floor(rng() * users))
  const usernames = (db.prepare(`SELECT username FROM users WHERE id IN (${userSample.join(',')})`).all() as Array<{ username: string }>).map((row) => row.username)
  const hashtags = (db.prepare('SELECT tag FROM hashtags WHERE posts_count > 0 ORDER BY posts_count DESC LIMIT 1000').all() as Array<{ tag: string }>).map((row) => row.tag)
  db.close()
  return { network, users, feedUsers: feedUsers, notifiedUsers: notifiedUsers.length > 0 ? notifiedUsers : [1], publicPosts, writesSeed, usernames, hashtags: hashtags.length > 0 ? hashtags : ['bench'] }
}

const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`
const rate = (n: number) => Math.round(n).toLocaleString('en')
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))

interface Row {
  endpoint: Endpoint
  plaza: Measured
  bare: Measured
  peak: number
  answerBytes: number
  answerStatus: number
}

async function measure(endpoint: Endpoint, fixtures: Fixtures, plaza: Server, bare: Awaited<ReturnType<typeof startBare>>): Promise<Row> {
  const rng = mulberry32(SEED * 7919 + endpoint.name.length + fixtures.writesSeed)
  // No request is the one before it again (a cache or the page cache would answer what users do not ask twice in a row).
  let previous = ''
  const next = () => {
    for (let tries = 0; ; tries++) {
      const spec = endpoint.next(fixtures, rng)
      const key = `${spec.method} ${spec.path} ${spec.headers?.authorization ?? ''} ${spec.body ?? ''}`
      if (key !== previous || tries >= 20) {
        previous = key
        return spec
      }
    }
  }
  const answer = await capture(plaza.url, next())
  if (answer.status >= 300) log(`  ${endpoint.name}: the captured answer is ${answer.status}: ${answer.body.toString().slice(0, 200)}`)
  await bare.serve(answer)
  const options = { seconds: SECONDS, connections: CONNECTIONS, maxRequests: MAX_REQUESTS, next }
  // Each Plaza round starts on an idle server: requests a round left in flight are still being answered.
  const probe: RequestSpec = { method: 'GET', path: `${API}/user/profile/1`, headers: bearer(fixtures, 1) }
  let settling = 0
  const idle = async () => (settling += await settle(plaza.url, probe))
  // The bare baseline never runs beside Plaza's deferred work: the fan-out of the posts a round
  // created is waited for (and reported) before it, so the next endpoint starts idle too.
  const fannedOut = async (what = '') => {
    const { posts, backfills, ms } = await waitForFanout(fixtures.network.dbFile)
    if (posts > 0 || backfills > 0) log(`  ${endpoint.name}: fan-out backlog${what} of ${posts} posts and ${backfills} follows' backfills drained in ${(ms / 1000).toFixed(1)} s`)
  }
  // Both servers get the endpoint's load unmeasured first, as TechEmpower's runs do: the rounds
  // measure the steady state, after V8 has compiled the endpoint's paths (its compiler threads
  // took a fifth to a third of the machine for the first seconds of a write endpoint) and the
  // pages it touches are back in memory.
  if (WARMUP > 0) {
    await runRound(bare.url, { ...options, seconds: WARMUP })
    await idle()
    await runRound(plaza.url, { ...options, seconds: WARMUP })
  }
  await idle()
  // The first round starts with no backlog of the warm-up's writes, as the others start with none of their predecessor's.
  await fannedOut(' of the warm-up')
  resetPeakRss(plaza.pids())
  const plazaRounds = []
  const bareRounds = []
  for (let round = 0; round < ROUNDS; round++) {
    plazaRounds.push(await runRound(plaza.url, options))
    await idle()
    await fannedOut()
    bareRounds.push(await runRound(bare.url, options))
  }
  if (settling > 2000) log(`  ${endpoint.name}: waited ${(settling / 1000).toFixed(1)} s in all for Plaza to finish requests left in flight`)
  const row = { endpoint, plaza: aggregate(plazaRounds, CONNECTIONS), bare: aggregate(bareRounds, CONNECTIONS), peak: peakRss(plaza.pids()), answerBytes: answer.body.length, answerStatus: answer.status }
  const codes = Object.entries(row.plaza.statusCodes).map(([code, n]) => `${code}: ${n}`).join(', ')
  log(`  ${endpoint.name}: plaza ${rate(row.plaza.perSecond)} req/s (${codes}; ${row.plaza.errors} errors), bare ${rate(row.bare.perSecond)} req/s, answer ${row.answerBytes} bytes`)
  return row
}

function table(rows: Row[]): string {
  const lines = [
    '| endpoint | Plaza req/s | bare req/s | ratio (bare/Plaza) | p50 ms | p99 ms | bare p50/p99 ms | peak server RSS | non-2xx/errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const row of rows) {
    const { plaza, bare } = row
    // No answer at all within the rounds: the latency is longer than a round, not zero.
    const none = plaza.requests === 0
    lines.push(
      `| ${row.endpoint.describe} | ${none ? `0 (none in ${plaza.seconds.toFixed(0)} s)` : plaza.perSecond < 10 ? plaza.perSecond.toFixed(1) : rate(plaza.perSecond)} | ${rate(bare.perSecond)} | ` +
        `${none ? '—' : `${(bare.perSecond / plaza.perSecond).toFixed(1)}×`} | ${none ? `> ${SECONDS * 1000}` : ms(plaza.p50)} | ${none ? '—' : ms(plaza.p99)} | ${ms(bare.p50)} / ${ms(bare.p99)} | ${MiB(row.peak)} | ${plaza.non2xx}/${plaza.errors} |`,
    )
  }
  return lines.join('\n')
}

async function main() {
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = only?.filter((name) => !ENDPOINTS.some((e) => e.name === name))
  if (unknown?.length) {
    console.error(`--only: unknown endpoint ${unknown.join(', ')} (known: ${ENDPOINTS.map((e) => e.name).join(', ')})`)
    process.exit(2)
  }
  const endpoints = only ? ENDPOINTS.filter((e) => only.includes(e.name)) : ENDPOINTS

  log(`network: ${DATA_DIR}`)
  const network = await seedNetwork(DATA_DIR, {
    users: USERS,
    posts: POSTS,
    follows: int('follows'),
    likes: int('likes'),
    comments: int('comments'),
    seed: SEED,
    log: (line) => log(line),
  })
  const m = network.manifest
  const c = m.counts
  console.log(
    `network: ${c.users.toLocaleString('en')} users, ${c.follows.toLocaleString('en')} follows, ${c.posts.toLocaleString('en')} posts (${c.publicPosts.toLocaleString('en')} public), ` +
      `${c.likes.toLocaleString('en')} likes, ${c.comments.toLocaleString('en')} comments, ${c.hashtags.toLocaleString('en')} hashtags, ${c.notifications.toLocaleString('en')} notifications`,
  )
  console.log(network.reused ? `seeding: reused ${DATA_DIR} (seeded earlier in ${m.seedingSeconds.toFixed(1)} s)` : `seeding: ${m.seedingSeconds.toFixed(1)} s (${Object.entries(m.phases).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join('; ')})`)

  let started = performance.now()
  // A reused directory holds the writes of earlier runs, so only the internal consistency is checked there.
  const before = verifyNetwork(network.dbFile, network.reused ? undefined : c)
  console.log(`counters before the run (${((performance.now() - started) / 1000).toFixed(1)} s):\n  ${before.lines.join('\n  ')}`)
  if (!before.ok) throw new Error('the seeded counters are not exact')

  const fixtures = loadFixtures(network, mulberry32(SEED))
  console.log(`fixtures: ${fixtures.feedUsers.length} feed users (following 180-220), ${fixtures.notifiedUsers.length} users with notifications, ${fixtures.publicPosts.length} public posts`)

  const servers: Server[] = []
  const stopAll = () => Promise.all(servers.map((s) => s.stop()))
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)))
  const rows: Row[] = []
  try {
    let plaza = await startPlaza(DATA_DIR, { workers: WORKERS, rateLimits: values['rate-limits'] })
    servers.push(plaza)
    const bare = await startBare()
    servers.push(bare)
    log(`plaza ${plaza.url} (pid ${plaza.pid}, ${WORKERS} worker${WORKERS > 1 ? 's' : ''}), bare ${bare.url} (pid ${bare.pid}); ${ROUNDS} rounds of ${SECONDS} s each, interleaved, ${CONNECTIONS} connections`)
    // Posts an interrupted run left pending are fanned out before the first round, not during it.
    const left = await waitForFanout(network.dbFile)
    if (left.posts > 0 || left.backfills > 0) log(`fan-out backlog of ${left.posts} posts and ${left.backfills} follows' backfills left by an earlier run drained in ${(left.ms / 1000).toFixed(1)} s`)
    for (const endpoint of endpoints) {
      if (!endpoint.env) {
        rows.push(await measure(endpoint, fixtures, plaza, bare))
        continue
      }
      // An endpoint measured under another configuration gets a Plaza of its own, alone while it runs.
      await plaza.stop()
      const own = await startPlaza(DATA_DIR, { workers: WORKERS, rateLimits: values['rate-limits'], env: endpoint.env })
      log(`  ${endpoint.name}: plaza ${own.url} with ${Object.entries(endpoint.env).map(([k, v]) => `${k}=${v}`).join(' ')}`)
      try {
        rows.push(await measure(endpoint, fixtures, own, bare))
      } finally {
        await own.stop()
      }
      plaza = await startPlaza(DATA_DIR, { workers: WORKERS, rateLimits: values['rate-limits'] })
      servers[0] = plaza
    }
  } finally {
    await stopAll()
  }

  console.log(
    `\n${c.users.toLocaleString('en')} users, ${c.follows.toLocaleString('en')} follows, ${c.posts.toLocaleString('en')} posts; ${CONNECTIONS} connections, ` +
      `${ROUNDS} × ${SECONDS} s per server, interleaved (Plaza, bare, Plaza, bare); plaza serve --workers ${WORKERS}; p50/p99 are Plaza's\n`,
  )
  console.log(table(rows))

  started = performance.now()
  const after = verifyNetwork(network.dbFile)
  console.log(`\ncounters after the writes (${((performance.now() - started) / 1000).toFixed(1)} s): ${after.ok ? 'all exact' : 'MISMATCH'}`)
  if (!after.ok) console.log('  ' + after.lines.join('\n  '))
  process.exitCode = after.ok ? 0 : 1
}

await main()
