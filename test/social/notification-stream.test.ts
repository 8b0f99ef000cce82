/**
 * GET /notifications/stream: refusals in the envelope before any stream, delivery in the list's
 * shape, from this process and from another one writing the same database, resumption with
 * Last-Event-ID (exactly what was missed), unread counts, heartbeats, caps, slow clients and
 * closing the server.
 */
import net from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sql } from 'drizzle-orm'
import { writeTransaction } from '../../src/server/db/client.js'
import { newestIdOfUserQuery, newestIdQuery, rawUnreadQuery, recipientsQuery } from '../../src/server/domain/notification-feed.js'
import { runCli, startServe } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { openEventStream, type EventStream } from '../helpers/sse.js'
import { API, comment, createPost, follow, like, queryPlan, type User } from './stories-notifications-fixtures.js'

const STREAM = `${API}/notifications/stream`

function open(server: TestServer, user: User | null, options: { lastEventId?: string; query?: string; headers?: Record<string, string> } = {}): Promise<EventStream> {
  return openEventStream(server.url + STREAM + (options.query ?? ''), { token: user?.token, lastEventId: options.lastEventId, headers: options.headers })
}

/** Waits until the stream has delivered its greeting (the first unread count): it is live from then on. */
const connected = (stream: EventStream) => stream.waitFor((events) => events.some((e) => e.event === 'unread_count'), 'the first unread_count')

/** Waits (generously, checking every few milliseconds) for a condition on the server's state. */
async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const ids = (stream: EventStream) => stream.notifications().map((n) => n.id as number)

async function listOf(server: TestServer, user: User) {
  const res = await server.request('GET', `${API}/notifications/list?limit=50`, { token: user.token })
  assert.is(res.status, 200)
  return res.body.data.notifications as Array<{ id: number; [key: string]: unknown }>
}

async function setup(env: NodeJS.ProcessEnv = {}) {
  const server = await startTestServer({ env })
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const postId = await createPost(server, alice, 'stream me #live')
  return { server, alice, bob, postId }
}

test('without a valid token: a 401 envelope, no stream; a malformed Last-Event-ID is a 400', async () => {
  const { server, alice } = await setup()
  try {
    for (const stream of [await open(server, null), await open(server, { ...alice, token: 'not-a-token' })]) {
      assert.is(stream.status, 401)
      assert.match(stream.headers.get('content-type')!, /application\/json/)
      assert.is(stream.body.status, 'error')
      assert.match(stream.body.message, /token|Authentication/i)
    }
    for (const options of [{ lastEventId: 'abc' }, { lastEventId: '-1' }, { lastEventId: '1.5' }, { query: '?last_event_id=9999999999999999999' }, { query: '?last_event_id=%20x' }]) {
      const stream = await open(server, alice, options)
      assert.is(stream.status, 400, JSON.stringify(options))
      assert.match(stream.body.message, /Last-Event-ID/)
    }
    assert.is(server.services.notificationFeed.size, 0, 'no refusal holds a place')
    const post = await server.request('POST', STREAM, { token: alice.token })
    assert.is(post.status, 405)
  } finally {
    await server.close()
  }
})

test('a new notification arrives in the list shape with its id; nothing older is replayed; unread_count follows creates and mark_read', async () => {
  const { server, alice, bob, postId } = await setup({ PLAZA_STREAM_UNREAD_CHECK: '50' })
  try {
    await follow(server, bob, alice)
    const stream = await open(server, alice)
    assert.is(stream.status, 200)
    assert.match(stream.headers.get('content-type')!, /^text\/event-stream/)
    assert.is(stream.headers.get('cache-control'), 'no-cache, no-transform')
    await connected(stream)
    assert.is(stream.retry, 3000, 'a retry hint')
    assert.equal(stream.unreadCounts(), [1], 'the unread count on connect')
    assert.equal(stream.notifications(), [], 'the existing notification is not replayed')

    await like(server, bob, postId)
    await stream.waitFor(() => stream.notifications().length === 1 && stream.unreadCounts().length === 2, 'the like and the new count')
    const [listed] = await listOf(server, alice)
    assert.equal(stream.notifications()[0], listed, 'exactly one item of GET /notifications/list')
    assert.is(stream.events.find((e) => e.event === 'notification')!.id, String(listed.id))
    assert.equal(stream.unreadCounts(), [1, 2])

    // Marked read through the API: the count drops without any new notification.
    assert.is((await server.request('PUT', `${API}/notifications/mark_read`, { token: alice.token })).status, 200)
    await stream.waitFor(() => stream.unreadCounts().at(-1) === 0, 'unread_count 0 after mark_read')
    // Bob sees none of Alice's notifications on his own stream.
    const bobs = await open(server, bob)
    await connected(bobs)
    await comment(server, bob, postId, 'hello')
    await stream.waitFor(() => stream.notifications().length === 2, 'the comment')
    assert.equal(bobs.notifications(), [])
    stream.close()
    bobs.close()
  } finally {
    await server.close()
  }
})

test('a notification written by another process (the embedded CLI on the same data directory) arrives on the stream', async () => {
  const { server, alice, bob, postId } = await setup()
  try {
    const stream = await open(server, alice)
    await connected(stream)
    const run = await runCli(['social', 'like', String(postId), '--data-dir', server.dataDir, '--json'], { env: { PLAZA_TOKEN: bob.token } })
    assert.is(run.code, 0, run.stderr)
    // The design delivers within a poll (250 ms); the wait is generous only for a loaded machine.
    await stream.waitFor(() => stream.notifications().length === 1, 'the like written by the other process')
    const [event] = stream.notifications()
    assert.is(event.type, 'like')
    assert.is(event.actor_id, bob.id)
    assert.is(event.post_id, postId)
    assert.equal(event, (await listOf(server, alice))[0])
    stream.close()
  } finally {
    await server.close()
  }
})

test('a client that reconnects with Last-Event-ID (header or query) gets exactly what it missed, then live ones, no duplicates', async () => {
  const { server, alice, bob, postId } = await setup()
  try {
    const first = await open(server, alice)
    await connected(first)
    await comment(server, bob, postId, 'one')
    await first.waitFor(() => first.notifications().length === 1, 'the first comment')
    const lastSeen = first.events.filter((e) => e.event === 'notification').at(-1)!.id!
    first.close()
    await first.ended

    for (const text of ['two', 'three', 'four']) await comment(server, bob, postId, text)
    const missed = (await listOf(server, alice)).map((n) => n.id).filter((id) => id > Number(lastSeen)).reverse()
    assert.is(missed.length, 3)

    const resumed = await open(server, alice, { lastEventId: lastSeen })
    await resumed.waitFor(() => ids(resumed).length === 3 && resumed.unreadCounts().length > 0, 'the three missed')
    assert.equal(ids(resumed), missed, 'exactly the missed ones, oldest first')
    assert.equal(resumed.notifications().map((n) => n.type), ['comment', 'comment', 'comment'])
    await comment(server, bob, postId, 'five')
    await resumed.waitFor(() => ids(resumed).length === 4, 'the live one after the replay')
    assert.is(new Set(ids(resumed)).size, 4, 'no duplicates')
    assert.ok(ids(resumed)[3] > missed[2])

    // The query parameter does the same, for clients that cannot set headers; 0 replays everything.
    const all = await open(server, alice, { query: '?last_event_id=0' })
    await all.waitFor(() => ids(all).length === 5, 'the whole history')
    assert.equal(ids(all), (await listOf(server, alice)).map((n) => n.id).reverse())
    resumed.close()
    all.close()
  } finally {
    await server.close()
  }
})

test('a long replay is delivered in order across batches, each id once', async () => {
  const { server, alice, bob, postId } = await setup()
  try {
    // 250 notifications in one transaction: more than two of the feed's batches.
    await writeTransaction(server.services.db, (tx) =>
      tx.run(sql`
        with recursive n(i) as (select 1 union all select i + 1 from n where i < 250)
        insert into notifications (user_id, actor_id, type, post_id, created_at) select ${alice.id}, ${bob.id}, 'like', ${postId}, 0 from n`),
    )
    const stream = await open(server, alice, { lastEventId: '0' })
    await stream.waitFor(() => ids(stream).length === 250, '250 replayed')
    const got = ids(stream)
    assert.equal(got, [...got].sort((a, b) => a - b))
    assert.is(new Set(got).size, 250)
    await stream.waitFor(() => stream.unreadCounts().at(-1) === 250, 'the count after the replay')
    stream.close()
  } finally {
    await server.close()
  }
})

test('heartbeats arrive as SSE comments at the configured interval', async () => {
  const { server, alice } = await setup({ PLAZA_STREAM_HEARTBEAT: '20ms' })
  try {
    const stream = await open(server, alice)
    await connected(stream)
    await stream.waitFor(() => stream.comments.filter((c) => c.trim() === 'heartbeat').length >= 2, 'two heartbeats')
    stream.close()
  } finally {
    await server.close()
  }
})

test('caps: streams per user and in total are refused with 429 past the limit; a closed stream frees its place', async () => {
  const { server, alice, bob } = await setup({ PLAZA_STREAMS_PER_USER: '2', PLAZA_STREAMS_MAX: '3' })
  try {
    const a1 = await open(server, alice)
    const a2 = await open(server, alice)
    const a3 = await open(server, alice)
    assert.is(a3.status, 429)
    assert.is(a3.body.status, 'error')
    assert.match(a3.body.message, /at most 2/)
    const b1 = await open(server, bob)
    assert.is(b1.status, 200)
    const b2 = await open(server, bob)
    assert.is(b2.status, 429)
    assert.match(b2.body.message, /at most 3/)
    await Promise.all([connected(a1), connected(a2), connected(b1)])
    assert.is(server.services.notificationFeed.size, 3)

    a1.close()
    await waitUntil(() => server.services.notificationFeed.size === 2, 'the disconnect to free its place')
    const again = await open(server, alice)
    assert.is(again.status, 200)
    for (const stream of [a2, b1, again]) stream.close()
  } finally {
    await server.close()
  }
})

test('closing the server ends every open stream, and close() returns', async () => {
  const { server, alice, bob } = await setup()
  const streams = [await open(server, alice), await open(server, alice), await open(server, bob)]
  await Promise.all(streams.map(connected))
  await server.close()
  await Promise.all(streams.map((stream) => stream.ended))
  assert.is(server.services.notificationFeed.size, 0)
})

test('a client whose socket buffer stays full is disconnected rather than buffered without bound', async () => {
  const { server, alice, bob, postId } = await setup({ PLAZA_STREAM_STALL: '300ms' })
  try {
    // Large enough that the replay cannot fit in the socket buffers of both ends.
    await writeTransaction(server.services.db, (tx) =>
      tx.run(sql`
        with recursive n(i) as (select 1 union all select i + 1 from n where i < 40000)
        insert into notifications (user_id, actor_id, type, post_id, created_at) select ${alice.id}, ${bob.id}, 'like', ${postId}, 0 from n`),
    )
    const { port } = new URL(server.url)
    const socket = net.connect(Number(port), '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET ${STREAM}?last_event_id=0 HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${alice.token}\r\n\r\n`)
    // Not read: the socket's buffers fill up and stay full.
    socket.pause()
    socket.on('error', () => {})
    await waitUntil(() => server.services.notificationFeed.size === 1, 'the stream to open')
    await waitUntil(() => server.services.notificationFeed.size === 0, 'the stalled stream released')
    // Reading again, the client finds the connection closed after what was buffered: far fewer than 40000 events.
    let received = ''
    socket.on('data', (chunk) => (received += chunk)).resume()
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    const delivered = received.match(/^event: notification$/gm)?.length ?? 0
    assert.ok(delivered > 0 && delivered < 40000, `${delivered} events were buffered`)
    // The server still serves streams.
    const stream = await open(server, alice)
    assert.is(stream.status, 200)
    stream.close()
  } finally {
    await server.close()
  }
})

test('plaza serve --workers 2: streams on either worker get a like written through either; SIGTERM ends every stream and all exit 0', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'])
  try {
    const call = async (method: string, path: string, token?: string, body?: unknown) => {
      const res = await fetch(url + API + path, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return (await res.json()).data
    }
    const account = async (name: string) => {
      const data = await call('POST', '/auth/register', undefined, { username: name, email: `${name}@example.com`, password: 'correct horse' })
      return { token: data.token as string, id: data.user.id as number }
    }
    const alice = await account('workers_alice')
    const bob = await account('workers_bob')
    const postId = (await call('POST', '/posts/create', alice.token, { content: 'two workers' })).id as number
    // Successive connections go to alternate workers: the two streams live in different processes.
    const streams = [await openEventStream(url + STREAM, { token: alice.token }), await openEventStream(url + STREAM, { token: alice.token })]
    await Promise.all(streams.map(connected))
    await call('POST', `/interactions/like/${postId}`, bob.token)
    await Promise.all(streams.map((stream) => stream.waitFor(() => stream.notifications().length === 1, 'the like on every stream')))
    for (const stream of streams) assert.is(stream.notifications()[0].actor_id, bob.id)
    child.kill('SIGTERM')
    await Promise.all(streams.map((stream) => stream.ended))
    assert.is(await exited, 0)
  } finally {
    child.kill('SIGKILL')
  }
})

test("the poller's queries are index lookups and ranges, never scans", async () => {
  const { server, alice, bob } = await setup()
  try {
    const db = server.services.db
    const plans = {
      newest: await queryPlan(server, newestIdQuery(db)),
      newestOfUser: await queryPlan(server, newestIdOfUserQuery(db, alice.id)),
      recipients: await queryPlan(server, recipientsQuery(db, 10, 20)),
      unread: await queryPlan(server, rawUnreadQuery(db, [alice.id, bob.id])),
    }
    // max(id) of the whole table: SQLite reads the last entry of the primary key.
    assert.match(plans.newest, /^SEARCH notifications$/, plans.newest)
    assert.match(plans.newestOfUser, /SEARCH notifications USING COVERING INDEX notifications_user_page_idx \(user_id=\?\)/, plans.newestOfUser)
    assert.match(plans.recipients, /SEARCH notifications USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/, plans.recipients)
    // The unread counts are the users' counters: keys of users, no notification read.
    assert.match(plans.unread, /^SEARCH users USING INTEGER PRIMARY KEY \(rowid=\?\)$/, plans.unread)
    for (const plan of Object.values(plans)) assert.not.match(plan, /SCAN/, plan)
  } finally {
    await server.close()
  }
})

test.run()
