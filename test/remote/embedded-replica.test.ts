/**
 * Embedded replicas (PLAZA_DATABASE_REPLICA, db/replica.ts) against a real sqld primary
 * (test/helpers/sqld.ts): the host reads a local file that libsql syncs from the primary, and
 * writes on the primary. Its writer reads its own writes at once (a write resolves once the replica
 * has its frame); what other hosts write shows after a sync; the reads are local, so they go on
 * while the primary is away, and writes are then a 503 that clears by itself when it is back.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServe } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { assertReadsOwnWrites, ok, untilInFeed } from './social.js'
import { fresh } from './fresh.js'
import { startSqld, type Sqld } from '../helpers/sqld.js'

const API = '/api/mobile'

let primary: Sqld
let embedded: TestServer
let other: TestServer
let replicaFile: string

test.before(async () => {
  primary = await startSqld()
  other = await startTestServer({ databaseUrl: primary.url })
  replicaFile = path.join(tempDir(), 'replica.db')
  embedded = await startTestServer({ databaseUrl: primary.url, env: { PLAZA_DATABASE_REPLICA: replicaFile, PLAZA_DATABASE_TIMEOUT: '3s' } })
})

test.after(async () => {
  await Promise.all([embedded.close(), other.close()])
  await primary.close()
})

test('the replica is a local file, private to Plaza, and reads come from it: local reads on the file, not requests to the server', () => {
  assert.ok(existsSync(replicaFile), 'the replica file exists')
  // It holds emails and password hashes: readable by Plaza's user only, like plaza.db.
  const beside = readdirSync(path.dirname(replicaFile)).filter((name) => name.startsWith('replica.db'))
  for (const name of beside) assert.is(statSync(path.join(path.dirname(replicaFile), name)).mode & 0o777, 0o600, name)
  assert.is.not(embedded.services.reads, embedded.services.db, 'reads are not the server connection')
})

test('the writer reads its own writes at once: each new post is in its profile, posts and feed on the next request', async () => {
  const alice = await registerUser(embedded)
  await assertReadsOwnWrites(embedded, alice, 15)
})

test("another host's writes reach the embedded replica by its sync", async () => {
  const bob = await registerUser(other)
  const carol = await registerUser(embedded)
  await ok(embedded, 'POST', `/user/follow/${bob.id}`, carol)
  const post = await ok(other, 'POST', '/posts/create', bob, { content: 'from a host without a replica' })
  // Not written by this host: it shows after the next sync (every second), which the test waits for.
  assert.ok(await untilInFeed(embedded, carol, post.id, { attempts: 2000, pauseMs: 10 }), "the other host's post reached the replica")
})

test('with the primary killed, reads are served from the replica, writes are a 503 with Retry-After; both work again once it is back', async () => {
  const dave = await registerUser(embedded)
  const post = await ok(embedded, 'POST', '/posts/create', dave, { content: 'before the outage' })
  await primary.kill()
  try {
    const read = await embedded.request('GET', `${API}/posts/detail/${post.id}`, { token: dave.token })
    assert.is(read.status, 200, JSON.stringify(read.body))
    const feed = await embedded.request('GET', `${API}/posts/feed?page=1&limit=5`, { token: dave.token })
    assert.is(feed.status, 200)
    assert.is(feed.body.data.posts[0]?.id, post.id)
    const write = await embedded.request('POST', `${API}/posts/create`, { token: dave.token, body: { content: 'during the outage' } })
    assert.is(write.status, 503, JSON.stringify(write.body))
    assert.is(write.body.message, 'The database is unavailable right now; try again shortly')
    assert.ok(Number(write.headers.get('retry-after')) > 0)
  } finally {
    await primary.restart()
  }
  const after = await ok(embedded, 'POST', '/posts/create', dave, { content: 'after the outage' })
  const mine = await ok(embedded, 'GET', `/posts/user/${dave.id}?page=1&limit=5`, dave)
  assert.is(mine.posts[0]?.id, after.id, 'the replica caught up with the write made after the outage')
})

test('plaza serve --workers 2 with a replica: a file per worker, and a write through one worker is read at once through the other', async () => {
  const file = path.join(tempDir(), 'host-replica.db')
  const serve = await startServe(['--port', '0', '--workers', '2', '--data-dir', tempDir()], {
    PLAZA_DATABASE_URL: primary.url,
    PLAZA_DATABASE_REPLICA: file,
    PLAZA_RATE_LIMITS: 'off',
    PLAZA_STORAGE_URL: '',
  })
  try {
    assert.ok(existsSync(`${file}-1`) && existsSync(`${file}-2`), 'one replica file per worker')
    assert.not.ok(existsSync(file), "the cluster's primary process keeps no replica")
    const registered = await fresh(serve.url + API, 'POST', '/auth/register', undefined, { username: 'replica_frank', email: 'replica_frank@example.com', password: 'correct horse', full_name: 'Frank' })
    assert.is(registered.status, 201, JSON.stringify(registered.body))
    const { token, user } = registered.body.data
    for (let i = 1; i <= 10; i++) {
      // Each on a new connection: the write and the reads after it land on alternating workers.
      const post = await fresh(serve.url + API, 'POST', '/posts/create', token, { content: `replica cluster post ${i}` })
      assert.is(post.status, 201, JSON.stringify(post.body))
      const mine = await fresh(serve.url + API, 'GET', `/posts/user/${user.id}?page=1&limit=5`, token)
      assert.is(mine.status, 200, JSON.stringify(mine.body))
      assert.is(mine.body.data.posts[0]?.id, post.body.data.id, `newest post after post ${i}`)
    }
  } finally {
    serve.child.kill('SIGTERM')
    await serve.exited
  }
})

test.run()
