/**
 * The same Plaza reads through its three database engines: (a) the local file, (b) a libsql server
 * (a real sqld, over Hrana-over-HTTP on loopback) and (c) an embedded replica of that sqld
 * (PLAZA_DATABASE_REPLICA), against a bare node:http server answering the very same bytes, in the
 * same run, interleaved: local, bare, sqld, embedded replica, then again. The network is
 * bench/social.ts's (seeded straight into the schema, cached), and sqld serves a copy of it. Each
 * Plaza is `plaza serve --workers 1`, so the engines compare on one process each.
 *
 *   npm run build
 *   npx tsx bench/databases.ts                                  # 10,000 users, 100,000 posts
 *   npx tsx bench/databases.ts --users 2000 --posts 20000 --seconds 3 --only profile,feed
 *
 * Flags: --users (10000), --posts (100000), --seconds per round (5), --rounds (2), --warmup (3),
 * --connections (20), --seed (1), --only (see ENDPOINTS). The aim it reports against: reads through
 * an embedded replica within 1.5× of the local file's time per request.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'libsql'
import { startSqld } from '../test/helpers/sqld.js'
import { aggregate, capture, runRound, settle, startBare, startPlaza, type Measured, type RequestSpec, type Server } from './lib/load.js'
import { mulberry32, seedNetwork, type SeededNetwork } from './lib/seed.js'

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    posts: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    only: { type: 'string' },
  },
})
const USERS = Number(values.users)
const POSTS = Number(values.posts)
const SEED = Number(values.seed)
const SECONDS = Number(values.seconds)
const ROUNDS = Math.max(1, Number(values.rounds))
const WARMUP = Number(values.warmup)
const CONNECTIONS = Math.max(1, Number(values.connections))
const DATA_DIR = path.join(tmpdir(), `plaza-bench-social-u${USERS}-p${POSTS}-s${SEED}`)
const API = '/api/mobile'
const log = (line: string) => process.stderr.write(line + '\n')

interface Fixtures {
  network: SeededNetwork
  users: number
  feedUsers: number[]
  notifiedUsers: number[]
  publicPosts: number[]
}

const pick = <T>(items: T[], rng: () => number): T => items[Math.floor(rng() * items.length)]
const anyUser = (f: Fixtures, rng: () => number) => 1 + Math.floor(rng() * f.users)
const bearer = (f: Fixtures, user: number) => ({ authorization: `Bearer ${f.network.tokenFor(user)}` })

const ENDPOINTS: Array<{ name: string; describe: string; next: (f: Fixtures, rng: () => number) => RequestSpec }> = [
  { name: 'profile', describe: 'GET /user/profile/{id}', next: (f, r) => ({ method: 'GET', path: `${API}/user/profile/${anyUser(f, r)}`, headers: bearer(f, anyUser(f, r)) }) },
  { name: 'post-detail', describe: 'GET /posts/detail/{id}', next: (f, r) => ({ method: 'GET', path: `${API}/posts/detail/${pick(f.publicPosts, r)}`, headers: bearer(f, anyUser(f, r)) }) },
  { name: 'feed', describe: 'GET /posts/feed', next: (f, r) => ({ method: 'GET', path: `${API}/posts/feed`, headers: bearer(f, pick(f.feedUsers, r)) }) },
  { name: 'notifications', describe: 'GET /notifications/list', next: (f, r) => ({ method: 'GET', path: `${API}/notifications/list`, headers: bearer(f, pick(f.notifiedUsers, r)) }) },
  { name: 'search', describe: 'GET /search/all?q=coffee', next: (f, r) => ({ method: 'GET', path: `${API}/search/all?q=coffee`, headers: bearer(f, anyUser(f, r)) }) },
]

function loadFixtures(network: SeededNetwork, rng: () => number): Fixtures {
  const db = new Database(network.dbFile, { readonly: true })
  const ids = (sql: string) => (db.prepare(sql).all() as Array<{ id: number }>).map((row) => row.id)
  let feedUsers = ids('SELECT id FROM users WHERE following_count BETWEEN 100 AND 200 LIMIT 2000')
  if (feedUsers.length === 0) feedUsers = ids('SELECT id FROM users ORDER BY following_count DESC LIMIT 100')
  const notifiedUsers = ids('SELECT id FROM users WHERE followers_count >= 50 LIMIT 2000')
  const sample = Array.from({ length: Math.min(20_000, POSTS) }, () => 1 + Math.floor(rng() * POSTS))
  const publicPosts = ids(`SELECT id FROM posts WHERE is_public = 1 AND id IN (${sample.join(',')})`)
  db.close()
  return { network, users: network.manifest.options.users, feedUsers, notifiedUsers: notifiedUsers.length ? notifiedUsers : [1], publicPosts }
}

const rate = (n: number) => Math.round(n).toLocaleString('en')
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))

type Engine = 'local' | 'sqld' | 'replica'
const ENGINES: Engine[] = ['local', 'sqld', 'replica']

async function main() {
  const only = values.only?.split(',').map((s) => s.trim())
  const endpoints = only ? ENDPOINTS.filter((e) => only.includes(e.name)) : ENDPOINTS
  const network = await seedNetwork(DATA_DIR, { users: USERS, posts: POSTS, seed: SEED, log })
  const c = network.manifest.counts
  log(`network ${DATA_DIR}: ${c.users} users, ${c.follows} follows, ${c.posts} posts`)
  const fixtures = loadFixtures(network, mulberry32(SEED))

  // sqld serves a copy of the network: its data directory's default database is the file itself.
  const scratch = mkdtempSync(path.join(tmpdir(), 'plaza-bench-databases-'))
  const checkpoint = new Database(network.dbFile)
  checkpoint.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  checkpoint.close()
  const sqldDir = path.join(scratch, 'sqld')
  mkdirSync(path.join(sqldDir, 'data.sqld', 'dbs', 'default'), { recursive: true })
  copyFileSync(network.dbFile, path.join(sqldDir, 'data.sqld', 'dbs', 'default', 'data'))

  const servers: Server[] = []
  const sqld = await startSqld({ dir: sqldDir })
  try {
    const plaza: Record<Engine, Server> = {
      local: await startPlaza(DATA_DIR),
      sqld: await startPlaza(path.join(scratch, 'host-sqld'), { env: { PLAZA_DATABASE_URL: sqld.url, PLAZA_STORAGE_URL: 'local' } }),
      // Its first start copies the whole database into the replica file (sqld's snapshot, then the log).
      replica: await startPlaza(path.join(scratch, 'host-replica'), {
        env: { PLAZA_DATABASE_URL: sqld.url, PLAZA_DATABASE_REPLICA: path.join(scratch, 'replica.db'), PLAZA_STORAGE_URL: 'local' },
      }),
    }
    servers.push(...Object.values(plaza))
    const bare = await startBare()
    servers.push(bare)
    log(`plaza local ${plaza.local.url}, on sqld ${plaza.sqld.url}, embedded replica ${plaza.replica.url}, bare ${bare.url}, sqld ${sqld.url}`)

    const rows: Array<{ describe: string; bare: Measured; engines: Record<Engine, Measured> }> = []
    for (const endpoint of endpoints) {
      const rng = mulberry32(SEED * 7919 + endpoint.name.length)
      const next = () => endpoint.next(fixtures, rng)
      const answer = await capture(plaza.local.url, next())
      if (answer.status >= 300) log(`  ${endpoint.name}: the captured answer is ${answer.status}: ${answer.body.toString().slice(0, 200)}`)
      await bare.serve(answer)
      const options = { seconds: SECONDS, connections: CONNECTIONS, maxRequests: 10_000_000, next }
      const probe: RequestSpec = { method: 'GET', path: `${API}/user/profile/1`, headers: bearer(fixtures, 1) }
      if (WARMUP > 0) {
        await runRound(bare.url, { ...options, seconds: WARMUP })
        for (const engine of ENGINES) {
          await runRound(plaza[engine].url, { ...options, seconds: WARMUP })
          await settle(plaza[engine].url, probe)
        }
      }
      const rounds: Record<Engine | 'bare', Awaited<ReturnType<typeof runRound>>[]> = { local: [], sqld: [], replica: [], bare: [] }
      for (let round = 0; round < ROUNDS; round++) {
        for (const engine of ENGINES) {
          rounds[engine].push(await runRound(plaza[engine].url, options))
          await settle(plaza[engine].url, probe)
          if (engine === 'local') rounds.bare.push(await runRound(bare.url, options))
        }
      }
      const engines = Object.fromEntries(ENGINES.map((engine) => [engine, aggregate(rounds[engine], CONNECTIONS)])) as Record<Engine, Measured>
      const row = { describe: endpoint.describe, bare: aggregate(rounds.bare, CONNECTIONS), engines }
      rows.push(row)
      log(`  ${endpoint.name}: ${ENGINES.map((e) => `${e} ${rate(engines[e].perSecond)} req/s (non-2xx ${engines[e].non2xx}, errors ${engines[e].errors})`).join(', ')}, bare ${rate(row.bare.perSecond)}`)
    }

    console.log(
      `\n${c.users.toLocaleString('en')} users, ${c.follows.toLocaleString('en')} follows, ${c.posts.toLocaleString('en')} posts; ${CONNECTIONS} connections; ` +
        `${ROUNDS} × ${SECONDS} s per server, interleaved (local, bare, sqld, embedded replica); plaza serve --workers 1 each; sqld ${sqld.url.replace(/:\d+$/, '')} on loopback\n`,
    )
    console.log('| endpoint | bare req/s | local file req/s (p50 ms) | sqld over HTTP req/s (p50 ms) | embedded replica req/s (p50 ms) | replica ÷ local time | sqld ÷ local time |')
    console.log('|---|---:|---:|---:|---:|---:|---:|')
    for (const row of rows) {
      const { local, sqld: remote, replica } = row.engines
      const cell = (m: Measured) => `${rate(m.perSecond)} (${ms(m.p50)})${m.non2xx || m.errors ? ` [${m.non2xx} non-2xx, ${m.errors} errors]` : ''}`
      console.log(
        `| ${row.describe} | ${rate(row.bare.perSecond)} | ${cell(local)} | ${cell(remote)} | ${cell(replica)} | ${(local.perSecond / replica.perSecond).toFixed(2)}× | ${(local.perSecond / remote.perSecond).toFixed(2)}× |`,
      )
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await sqld.close()
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()
