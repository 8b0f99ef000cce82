/**
 * Two Plaza hosts, each with its own port and data directory, on one database and one bucket: a
 * real sqld (test/helpers/sqld.ts) with JWT auth, reached over HTTP with its token as an operator's
 * would be, and the S3 test server (test/storage/fake-s3.ts; a bucket cannot run here). What is done through one host is
 * seen and enforced through the other: accounts and sessions, posts and the fan-out, follows, likes,
 * search, uploads (the record and the file), notifications (listed and streamed) and rate limits;
 * and two hosts starting together apply each migration once.
 */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, type Client } from '@libsql/client'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import { MIGRATIONS_DIR } from '../../src/server/db/client.js'
import { startSqld, type Sqld } from '../helpers/sqld.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { ok } from './social.js'
import { openEventStream } from '../helpers/sse.js'
import { startFakeS3, type FakeS3 } from '../storage/fake-s3.js'
import { solidImage, upload } from '../uploads/fixtures.js'

const API = '/api/mobile'
let sqld: Sqld
let s3: FakeS3
let a: TestServer
let b: TestServer
let client: Client

/** A host on the shared database and bucket; the stream poll is short so that a live notification arrives quickly. */
const host = (options: Parameters<typeof startTestServer>[0] = {}) =>
  startTestServer({ ...options, databaseUrl: sqld.url, env: s3.env('plaza', { PLAZA_DATABASE_AUTH_TOKEN: sqld.token, PLAZA_STREAM_POLL: '20ms', ...options.env }) })

test.before(async () => {
  sqld = await startSqld({ auth: true })
  s3 = await startFakeS3()
  // Both at once: one takes the migration lease and migrates, the other waits and finds nothing to do.
  ;[a, b] = await Promise.all([host(), host()])
  client = createClient({ url: sqld.url, authToken: sqld.token })
})

test.after(async () => {
  client.close()
  await Promise.all([a.close(), b.close()])
  await sqld.close()
  await s3.close()
})

test('two hosts starting at once apply each migration exactly once and give the lease back', async () => {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS_DIR}/meta/_journal.json`, 'utf8')) as { entries: unknown[] }
  const applied = await client.execute('select count(*) as n, count(distinct hash) as distinct_hashes from __drizzle_migrations')
  assert.is(Number(applied.rows[0].n), journal.entries.length)
  assert.is(Number(applied.rows[0].distinct_hashes), journal.entries.length)
  const lease = await client.execute('select count(*) as n from plaza_migration_lock')
  assert.is(Number(lease.rows[0].n), 0)
  assert.not.equal(a.dataDir, b.dataDir)
  assert.not.equal(a.url, b.url)
})

test('an account and its session made through one host work through the other', async () => {
  const alice = await registerUser(a)
  const me = await ok(b, 'GET', '/user/profile', alice)
  assert.is((me.user ?? me).id, alice.id)
  const login = await b.request('POST', `${API}/auth/login`, { body: { email: `${alice.username}@example.com`, password: 'correct horse' } })
  assert.is(login.status, 200, JSON.stringify(login.body))
  // Logging out through B revokes the session for A at once: sessions are rows, not a host's memory.
  const session = login.body.data.token as string
  assert.is((await a.request('GET', `${API}/user/profile`, { token: session })).status, 200)
  assert.is((await b.request('POST', `${API}/auth/logout`, { token: session })).status, 200)
  assert.is((await a.request('GET', `${API}/user/profile`, { token: session })).status, 401)
})

test('a post, follow and like through one host are seen through the other: feed, counters, notifications', async () => {
  const alice = await registerUser(a)
  const bob = await registerUser(b)
  await ok(b, 'POST', `/user/follow/${alice.id}`, bob)
  const post = await ok(a, 'POST', '/posts/create', alice, { content: 'hello from host A #crosshost' })
  // The fan-out may run on either host; the feed is exact either way (pending posts are read from posts).
  const feed = await ok(b, 'GET', '/posts/feed?page=1&limit=10', bob)
  assert.ok(feed.posts.some((item: { id: number }) => item.id === post.id), JSON.stringify(feed))
  await ok(b, 'POST', `/interactions/like/${post.id}`, bob)
  const seen = await ok(a, 'GET', `/posts/detail/${post.id}`, bob)
  const detail = seen.post ?? seen
  assert.is(detail.likes_count, 1)
  assert.is(detail.user_liked, true)
  const profile = await ok(a, 'GET', `/user/profile/${alice.id}`, bob)
  assert.is((profile.user ?? profile).followers_count, 1)
  const list = await ok(a, 'GET', '/notifications/list?limit=10', alice)
  const types = list.notifications.map((n: { type: string; actor?: { id: number } }) => n.type).sort()
  assert.equal(types, ['follow', 'like'])
  // A second like of the same post through the other host is the same like, not another one.
  await ok(a, 'POST', `/interactions/like/${post.id}`, bob)
  const again = await ok(b, 'GET', `/posts/detail/${post.id}`, alice)
  assert.is((again.post ?? again).likes_count, 1)
})

test('search through one host finds what was posted through the other (FTS5 on the libsql server)', async () => {
  const carol = await registerUser(a)
  await ok(a, 'POST', '/posts/create', carol, { content: 'aurora over the fjord tonight' })
  const found = await ok(b, 'GET', '/search/posts?q=fjord', carol)
  const posts = found.posts ?? found
  assert.ok(Array.isArray(posts) && posts.some((item: { content: string }) => /fjord/.test(item.content)), JSON.stringify(found))
})

test('a notification caused through one host arrives on a stream held open by the other', async () => {
  const dave = await registerUser(a)
  const erin = await registerUser(b)
  const post = await ok(a, 'POST', '/posts/create', dave, { content: 'stream me across hosts' })
  const stream = await openEventStream(`${a.url}${API}/notifications/stream`, { token: dave.token })
  try {
    assert.is(stream.status, 200)
    await stream.waitFor((events) => events.some((e) => e.event === 'unread_count'), 'the first unread_count')
    await ok(b, 'POST', `/interactions/comment/${post.id}`, erin, { content: 'seen from host B' })
    await stream.waitFor((events) => events.some((e) => e.event === 'notification'), 'the comment notification')
    const [notification] = stream.notifications()
    assert.is(notification.type, 'comment')
    assert.is(notification.actor?.id ?? notification.actor_id, erin.id)
  } finally {
    stream.close()
  }
})

test('an upload through one host is served by the other and can be attached to a post there', async () => {
  const frank = await registerUser(a)
  const res = await upload(a, 'post', frank.token, await solidImage(32, 24, 'png'), 'p.png')
  assert.is(res.status, 201, JSON.stringify(res.body))
  // The file is in the shared bucket, not on host A's disk: host B serves the same bytes.
  const fromA = await a.request('GET', `/${res.body.data.path}`)
  const fromB = await b.request('GET', `/${res.body.data.path}`)
  assert.is(fromA.status, 200)
  assert.is(fromB.status, 200)
  assert.ok(Buffer.compare(fromA.body as Buffer, fromB.body as Buffer) === 0, 'the same bytes through both hosts')
  assert.ok([...s3.objects.keys()].some((key) => key.endsWith(String(res.body.data.path).split('/').pop()!)), 'stored in the bucket')
  const post = await ok(b, 'POST', '/posts/create', frank, { content: 'photo via host B', image: res.body.data.path })
  assert.is(post.image, res.body.data.path)
  // Someone else's upload is refused through either host, whichever stored it.
  const grace = await registerUser(b)
  const refused = await b.request('POST', `${API}/posts/create`, { token: grace.token, body: { content: 'not mine', image: res.body.data.path } })
  assert.is(refused.status, 400)
})

test('a rate limit is one budget across hosts: requests through either count, and either refuses past it', async () => {
  const clock = manualClock(new Date())
  const limits = { ...DEFAULT_RATE_LIMITS, default: { max: 4, windowMs: 60_000 } }
  const [x, y] = await Promise.all([host({ rateLimits: limits, clock: clock.clock }), host({ rateLimits: limits, clock: clock.clock })])
  try {
    const user = await registerUser(x)
    const statuses: number[] = []
    for (const server of [x, y, x, y, x, y]) statuses.push((await server.request('GET', `${API}/posts/feed?page=1&limit=5`, { token: user.token })).status)
    assert.equal(statuses, [200, 200, 200, 200, 429, 429])
    const refused = await y.request('GET', `${API}/posts/feed?page=1&limit=5`, { token: user.token })
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    // The next window, by the shared clock, is open again on both.
    clock.advance(60_000)
    assert.is((await y.request('GET', `${API}/posts/feed?page=1&limit=5`, { token: user.token })).status, 200)
    assert.is((await x.request('GET', `${API}/posts/feed?page=1&limit=5`, { token: user.token })).status, 200)
  } finally {
    await Promise.all([x.close(), y.close()])
  }
})

test.run()
