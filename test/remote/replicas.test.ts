/**
 * A Plaza host on a sqld replica (`--primary-grpc-url`), beside a host on the primary
 * (`--grpc-listen-addr`), both real sqld processes (test/helpers/sqld.ts): the replica host's writes
 * reach the primary, its reads are answered by the replica (they go on while the primary is away),
 * and a client reads its own writes through it at once: the host sends the replication index of its
 * latest write with every request, and the replica answers once it has replicated that far
 * (db/server-client.ts). Without that, a read right after a write through this replica missed it
 * about every other time (31 of 50 when tried by hand).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, type Client } from '@libsql/client'
import { startServe } from '../helpers/cli.js'
import { fresh } from './fresh.js'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { assertReadsOwnWrites, ok, untilInFeed } from './social.js'
import { startSqld, type Sqld } from '../helpers/sqld.js'

const API = '/api/mobile'

let primary: Sqld
let replica: Sqld
let onPrimary: TestServer
let onReplica: TestServer
let direct: Client

test.before(async () => {
  primary = await startSqld({ grpc: true })
  replica = await startSqld({ primary })
  // The host on the primary migrates; the one on the replica finds the migrations applied (replicated to it).
  onPrimary = await startTestServer({ databaseUrl: primary.url })
  onReplica = await startTestServer({ databaseUrl: replica.url })
  direct = createClient({ url: primary.url })
})

test.after(async () => {
  direct.close()
  await Promise.all([onPrimary.close(), onReplica.close()])
  await replica.close()
  await primary.close()
})

test("the replica host's writes reach the primary", async () => {
  const alice = await registerUser(onReplica)
  const post = await ok(onReplica, 'POST', '/posts/create', alice, { content: 'written through the replica' })
  const rows = await direct.execute({ sql: 'select u.username from posts p join users u on u.id = p.user_id where p.id = ?', args: [post.id] })
  assert.equal(rows.rows.map((row) => row.username), [alice.username])
})

test('a client reads its own writes through the replica host at once: each new post is in its profile, its posts and its feed on the next request', async () => {
  const bob = await registerUser(onReplica)
  await assertReadsOwnWrites(onReplica, bob, 15)
})

test('what is written through the primary host shows through the replica host (replication), and the other way', async () => {
  const carol = await registerUser(onPrimary)
  const dave = await registerUser(onReplica)
  await ok(onReplica, 'POST', `/user/follow/${carol.id}`, dave)
  const post = await ok(onPrimary, 'POST', '/posts/create', carol, { content: 'from the primary host' })
  // The replica host has not written this: it shows once replicated (milliseconds), so the test waits for it.
  assert.ok(await untilInFeed(onReplica, dave, post.id, { attempts: 500 }), "the primary host's post reached the replica host's reads")
  const followers = await ok(onPrimary, 'GET', `/user/profile/${carol.id}`, carol)
  assert.is((followers.user ?? followers).followers_count, 1)
})

test('plaza serve --workers 2 on the replica: a write through one worker is read at once through the other', async () => {
  const serve = await startServe(['--port', '0', '--workers', '2', '--data-dir', tempDir()], { PLAZA_DATABASE_URL: replica.url, PLAZA_RATE_LIMITS: 'off', PLAZA_STORAGE_URL: '' })
  try {
    const registered = await fresh(serve.url + API, 'POST', '/auth/register', undefined, { username: 'cluster_erin', email: 'cluster_erin@example.com', password: 'correct horse', full_name: 'Erin' })
    assert.is(registered.status, 201, JSON.stringify(registered.body))
    const { token, user } = registered.body.data
    for (let i = 1; i <= 10; i++) {
      // Each on a new connection: the write and the reads after it land on alternating workers.
      const post = await fresh(serve.url + API, 'POST', '/posts/create', token, { content: `cluster post ${i}` })
      assert.is(post.status, 201, JSON.stringify(post.body))
      const mine = await fresh(serve.url + API, 'GET', `/posts/user/${user.id}?page=1&limit=5`, token)
      assert.is(mine.status, 200, JSON.stringify(mine.body))
      assert.is(mine.body.data.posts[0]?.id, post.body.data.id, `newest post after post ${i}`)
      const profile = await fresh(serve.url + API, 'GET', `/user/profile/${user.id}`, token)
      assert.is((profile.body.data.user ?? profile.body.data).posts_count, i)
    }
  } finally {
    serve.child.kill('SIGTERM')
    await serve.exited
  }
})

test.run()
