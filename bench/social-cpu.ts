/**
 * The CPU time `plaza serve` spends per request of the social API's reads, on a network
 * bench/social.ts seeded: user + system time of the server's processes from /proc (Linux), over
 * --requests requests (after --warmup unmeasured ones: 3,000 by default, as the JIT compiler is still
 * at work for the first thousand or so, and bench/social.ts measures after seconds of full load),
 * --concurrency at a time, one process. On a
 * machine shared with other work, throughput moves with the load while the CPU a request costs
 * moves far less, so this compares two builds where bench/social.ts cannot: run it from each
 * build's checkout (after `npm run build`) on each one's network, alternated.
 *
 *   npx tsx bench/social.ts --users 10000 --posts 100000 --data-dir /tmp/net --only profile --seconds 1
 *   npx tsx bench/social-cpu.ts --data-dir /tmp/net
 *
 * search-posts asks six common words (mostly answered from the search cache); search-all varies q
 * as bench/social.ts does (words, pairs, prefixes, usernames, hashtags, drawn from the network).
 * --only feed,profile,... measures those endpoints alone. Prints one line: milliseconds of CPU per
 * request, by endpoint. Everything stays on loopback.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'libsql'
import { startPlaza } from './lib/load.js'
import { benchToken, mulberry32 } from './lib/seed.js'

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    requests: { type: 'string', default: '1500' },
    warmup: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
    label: { type: 'string', default: '' },
    only: { type: 'string' },
  },
})
if (!values['data-dir']) {
  console.error('--data-dir DIR: a network bench/social.ts seeded')
  process.exit(2)
}
const dir = values['data-dir']
const REQUESTS = Number(values.requests)
const WARMUP = Number(values.warmup)
const CONCURRENCY = Number(values.concurrency)
const SEED = Number(values.seed)

const db = new Database(path.join(dir, 'plaza.db'), { readonly: true })
const users = Number((db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n)
// Posts anyone may open (before issue 49 every account is public), drawn as bench/social.ts draws
// them: from all the seeded posts, not the newest (which, after a run that measured writes, are
// the benchmark's own posts, with no comments).
const hasPrivate = Number((db.prepare("SELECT count(*) AS n FROM pragma_table_info('users') WHERE name = 'is_private'").get() as { n: number }).n) > 0
const seeded = existsSync(path.join(dir, 'bench-network.json'))
  ? (JSON.parse(readFileSync(path.join(dir, 'bench-network.json'), 'utf8')) as { options: { posts: number } }).options.posts
  : Number((db.prepare('SELECT max(id) AS n FROM posts').get() as { n: number }).n)
const draw = mulberry32(SEED + 1)
const sample = Array.from({ length: Math.min(20_000, seeded) }, () => 1 + Math.floor(draw() * seeded))
const publicPosts = (db.prepare(`SELECT p.id FROM posts p JOIN users u ON u.id = p.user_id WHERE p.is_public = 1 ${hasPrivate ? 'AND u.is_private = 0' : ''} AND p.id IN (${sample.join(',')})`).all() as Array<{ id: number }>).map((row) => row.id)
// What varied searches draw from, as bench/social.ts's do: the posts' words, usernames, hashtags.
const vocabulary = [...new Set((db.prepare('SELECT content FROM posts WHERE id % 997 = 0 LIMIT 500').all() as Array<{ content: string }>).flatMap((row) => row.content.toLowerCase().match(/\p{L}{2,}/gu) ?? []))]
const usernames = (db.prepare('SELECT username FROM users WHERE id % 499 = 0 LIMIT 200').all() as Array<{ username: string }>).map((row) => row.username)
const hashtags = (db.prepare('SELECT tag FROM hashtags LIMIT 500').all() as Array<{ tag: string }>).map((row) => row.tag)
db.close()

const rng = mulberry32(SEED)
const anyUser = () => 1 + Math.floor(rng() * users)
const WORDS = ['coffee', 'the', 'morning', 'city', 'garden', 'music']
const pick = <T>(items: T[]): T => items[Math.floor(rng() * items.length)]
/** A word, two words, a word's first three letters, a username or its start, a hashtag: never the same twice in a row. */
let lastQuery = ''
function variedQuery(): string {
  const kind = rng()
  const q =
    kind < 0.3 ? pick(vocabulary)
    : kind < 0.5 ? `${pick(vocabulary)} ${pick(vocabulary)}`
    : kind < 0.7 ? pick(vocabulary.filter((word) => word.length >= 3)).slice(0, 3)
    : kind < 0.85 ? pick(usernames).slice(0, rng() < 0.5 ? undefined : 3 + Math.floor(rng() * 4))
    : `#${pick(hashtags)}`
  if (q === lastQuery) return variedQuery()
  lastQuery = q
  return encodeURIComponent(q)
}
const ENDPOINTS: Record<string, () => string> = {
  feed: () => '/posts/feed',
  explore: () => '/posts/explore',
  notifications: () => '/notifications/list',
  profile: () => `/user/profile/${anyUser()}`,
  'post-detail': () => `/posts/detail/${publicPosts[Math.floor(rng() * publicPosts.length)]}`,
  'search-posts': () => `/search/posts?q=${WORDS[Math.floor(rng() * WORDS.length)]}`,
  'search-all': () => `/search/all?q=${variedQuery()}`,
}

const server = await startPlaza(dir, { workers: 1 })
/** utime + stime of every serving process, in clock ticks (1/100 s). */
const cpuTicks = () =>
  server.pids().reduce((sum, pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
      return sum + Number(fields[11]) + Number(fields[12])
    } catch {
      return sum
    }
  }, 0)

async function load(next: () => string, n: number): Promise<void> {
  let sent = 0
  const client = async () => {
    while (sent++ < n) {
      const res = await fetch(`${server.url}/api/mobile${next()}`, { headers: { authorization: `Bearer ${benchToken(SEED, anyUser())}` } })
      if (res.status !== 200) throw new Error(`${res.url}: ${res.status}`)
      await res.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, client))
}

/**
 * Waits (up to 30 s) until the server's processes are idle, two quarter-seconds in a row: work
 * started with the server (the code-image renderer's warm-up, PLAZA_CODEIMAGE_WARM) would
 * otherwise count against the first endpoint measured.
 */
async function idle(): Promise<void> {
  let quiet = 0
  for (let waited = 0; quiet < 2 && waited < 30_000; waited += 250) {
    const before = cpuTicks()
    await new Promise((resolve) => setTimeout(resolve, 250))
    quiet = cpuTicks() - before <= 1 ? quiet + 1 : 0
  }
}

const figures: string[] = []
try {
  await idle()
  const only = values.only?.split(',')
  for (const [name, next] of Object.entries(ENDPOINTS)) {
    if (only && !only.includes(name)) continue
    await load(next, WARMUP)
    const before = cpuTicks()
    await load(next, REQUESTS)
    figures.push(`${name}=${(((cpuTicks() - before) * 10) / REQUESTS).toFixed(3)}`)
  }
} finally {
  await server.stop()
}
console.log(`${values.label ? values.label + ' ' : ''}ms CPU/request ${figures.join(' ')}`)
