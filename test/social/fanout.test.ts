/**
 * Deferred fan-out (domain/fanout.ts): a post is in every feed it belongs to from its commit on,
 * while it is pending and after the runner wrote it into the timelines; an unfollow, a follow or
 * an author crossing the fan-out threshold in between changes nothing in the answers; a failing
 * slice is logged and retried while the server keeps serving; an embedded command fans out its
 * own posts as it closes.
 */
import type { Client } from '@libsql/client'
import Database from 'libsql'
import path from 'node:path'
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig } from '../../src/server/config.js'
import { LOCK_DOOR_MS, standBackMs } from '../../src/server/domain/fanout.js'
import { createPost, directFeedQuery, pageOf, postsWithMedia } from '../../src/server/domain/posts.js'
import { silentLogger, type Logger } from '../../src/server/logger.js'
import { createServices } from '../../src/server/services.js'
import { manualClock, registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { fanoutProgress, followUser, holdFanout, pendingBackfills, post, rawClient, timelineIdsOf, unfollowUser } from './helpers.js'

/** Accounts with more than 2 followers are pulled, so one can cross the threshold while its post is pending. */
const THRESHOLD = 2
const clock = manualClock()

/** The error lines the server logged; `nextError` resolves at the next one. */
const errors: string[] = []
let onError: (() => void) | undefined
const logger: Logger = {
  ...silentLogger,
  error(message) {
    errors.push(message)
    onError?.()
  },
}
const nextError = () => new Promise<void>((resolve) => (onError = resolve))

let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock, logger, env: { PLAZA_FANOUT_MAX_FOLLOWERS: String(THRESHOLD) } })
})
test.after(async () => {
  await server.close()
})

type User = Awaited<ReturnType<typeof registerUser>>

async function feedIds(user: User, page = 1, limit = 20): Promise<number[]> {
  const res = await server.request('GET', `/api/mobile/posts/feed?page=${page}&limit=${limit}`, { token: user.token })
  assert.is(res.status, 200)
  return res.body.data.posts.map((p: { id: number }) => p.id)
}

/** Every page asked for equals the direct query over follows and posts (the feed's definition). */
async function assertFeedsExact(users: User[], pagings: Array<[number, number]>, context: string) {
  for (const user of users) {
    for (const [page, limit] of pagings) {
      const res = await server.request('GET', `/api/mobile/posts/feed?page=${page}&limit=${limit}`, { token: user.token })
      const paging = { page, limit }
      const { items, has_more } = pageOf(await directFeedQuery(server.services.db, user.id, paging), paging, (row) => row)
      assert.equal(res.body.data, { posts: await postsWithMedia(server.services.db, items), page, has_more }, `${context}: user ${user.id} page ${page} limit ${limit}`)
    }
  }
}

const timelineIds = (userId: number) => timelineIdsOf(server, userId)
const unfollow = (by: User, target: User) => unfollowUser(server, by.token, target.id)

test('a post is in its followers’ feeds before its fan-out, followers-only ones too; the fan-out then writes its timeline rows', async () => {
  const [author, follower, stranger] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await followUser(server, follower.token, author.id)
  const release = await holdFanout(server)
  const open = await post(server, author.token, { content: 'open' })
  clock.advance(1)
  const closed = await post(server, author.token, { content: 'closed', is_public: false })
  clock.advance(1)
  assert.ok((await fanoutProgress(server)).cursor < open.id, 'both posts are pending')
  assert.equal(await timelineIds(follower.id), [])
  assert.equal(await feedIds(follower), [closed.id, open.id])
  assert.equal(await feedIds(author), [closed.id, open.id])
  assert.equal(await feedIds(stranger), [])
  await assertFeedsExact([author, follower, stranger], [[1, 1], [2, 1], [1, 20]], 'pending')

  await release()
  await server.services.fanout.drain()
  const { cursor, newest } = await fanoutProgress(server)
  assert.is(cursor, newest)
  assert.equal(await timelineIds(follower.id), [closed.id, open.id])
  assert.equal(await timelineIds(author.id), [closed.id, open.id])
  assert.equal(await timelineIds(stranger.id), [])
  await assertFeedsExact([author, follower, stranger], [[1, 1], [2, 1], [1, 20]], 'fanned out')
})

test('pending posts older than a full page are left to the later pages that reach them', async () => {
  const [author, friend, reader] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await followUser(server, reader.token, author.id)
  await followUser(server, reader.token, friend.id)
  clock.advance(1000)
  for (let i = 0; i < 6; i++) {
    await post(server, friend.token, { content: `friend ${i}` })
    clock.advance(1)
  }
  await server.services.fanout.drain()
  const release = await holdFanout(server)
  // Pending, and older than every entry of the reader's timeline (another process's clock, say).
  clock.advance(-100)
  const old = await post(server, author.token, { content: 'late' })
  clock.advance(200)
  const fresh = await post(server, author.token, { content: 'fresh' })
  clock.advance(1)
  assert.is((await feedIds(reader, 1, 3))[0], fresh.id)
  assert.is((await feedIds(reader, 1, 20)).at(-1), old.id)
  await assertFeedsExact([reader, author], [[1, 2], [2, 2], [3, 2], [4, 2], [1, 20]], 'pending')
  await release()
  await server.services.fanout.drain()
  await assertFeedsExact([reader, author], [[1, 2], [3, 2], [4, 2], [1, 20]], 'fanned out')
})

test('an unfollow between a post and its fan-out keeps the post out of the ex-follower’s feed and timeline', async () => {
  const [author, follower] = [await registerUser(server), await registerUser(server)]
  await followUser(server, follower.token, author.id)
  const release = await holdFanout(server)
  const pending = await post(server, author.token, { content: 'soon unfollowed', is_public: false })
  clock.advance(1)
  assert.equal(await feedIds(follower), [pending.id])
  await unfollow(follower, author)
  assert.equal(await feedIds(follower), [])
  await release()
  await server.services.fanout.drain()
  assert.equal(await timelineIds(follower.id), [])
  assert.equal(await feedIds(follower), [])
  assert.equal(await timelineIds(author.id), [pending.id])
})

test('a follow while a post is pending backfills it, and the fan-out then leaves it there once', async () => {
  const [author, newcomer] = [await registerUser(server), await registerUser(server)]
  const release = await holdFanout(server)
  const pending = await post(server, author.token, { content: 'before the follow' })
  clock.advance(1)
  await followUser(server, newcomer.token, author.id)
  // The backfill waits for the runner (held here with the posts); the feed merges the followee's posts meanwhile.
  assert.equal(await timelineIds(newcomer.id), [])
  assert.equal(await pendingBackfills(server, newcomer.id), [author.id])
  assert.equal(await feedIds(newcomer), [pending.id])
  await release()
  await server.services.fanout.drain()
  assert.equal(await timelineIds(newcomer.id), [pending.id])
  assert.equal(await pendingBackfills(server, newcomer.id), [])
  assert.equal(await feedIds(newcomer), [pending.id])
})

test('an unfollow, a block or a mute before the runner backfills a follow: the feed never shows the posts, and the runner drops the pair', async () => {
  const [author, leaver, blocker, muter] = [await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server)]
  const published = await post(server, author.token, { content: 'fanned out before the follows' })
  clock.advance(1)
  await server.services.fanout.drain()
  // A pending post makes every slice fail while held, so the follows' backfills wait too.
  const release = await holdFanout(server)
  const pending = await post(server, author.token, { content: 'pending' })
  clock.advance(1)
  const followers = [leaver, blocker, muter]
  for (const user of followers) await followUser(server, user.token, author.id)
  for (const user of followers) {
    assert.equal(await pendingBackfills(server, user.id), [author.id])
    assert.equal(await timelineIds(user.id), [])
    assert.equal(await feedIds(user), [pending.id, published.id], 'merged while the backfill is pending')
  }
  await unfollow(leaver, author)
  assert.equal(await pendingBackfills(server, leaver.id), [], 'an unfollow drops the pair in its transaction')
  assert.is((await server.request('POST', `/api/mobile/user/block/${author.id}`, { token: blocker.token })).status, 200)
  assert.equal(await pendingBackfills(server, blocker.id), [], "a block's unfollow too")
  assert.is((await server.request('POST', `/api/mobile/user/mute/${author.id}`, { token: muter.token })).status, 200)
  assert.equal(await pendingBackfills(server, muter.id), [author.id], 'a mute keeps the follow, and the pair')
  for (const user of followers) assert.equal(await feedIds(user), [], 'nothing of the author while pending')
  await release()
  await server.services.fanout.drain()
  for (const user of followers) {
    assert.equal(await pendingBackfills(server, user.id), [])
    assert.equal(await timelineIds(user.id), [], 'nothing backfilled')
    assert.equal(await feedIds(user), [])
  }
  // The unmute backfills the muter's timeline as a follow does.
  assert.is((await server.request('DELETE', `/api/mobile/user/unmute/${author.id}`, { token: muter.token })).status, 200)
  assert.equal(await timelineIds(muter.id), [pending.id, published.id])
  assert.equal(await feedIds(muter), [pending.id, published.id])
})

test('an author who crosses the threshold while its post is pending is pulled when the post is fanned out', async () => {
  const author = await registerUser(server)
  const fans = [await registerUser(server), await registerUser(server), await registerUser(server)]
  for (const fan of fans.slice(0, THRESHOLD)) await followUser(server, fan.token, author.id)
  const release = await holdFanout(server)
  const pending = await post(server, author.token, { content: 'then famous' })
  clock.advance(1)
  await followUser(server, fans[THRESHOLD].token, author.id) // THRESHOLD + 1 followers
  await assertFeedsExact(fans, [[1, 20]], 'pending')
  await release()
  await server.services.fanout.drain()
  const pulled = await rawClient(server).execute({ sql: 'select count(*) as n from timeline_pulled_authors where user_id = ?', args: [author.id] })
  assert.is(Number(pulled.rows[0].n), 1)
  // The fan-out runs before the backfills of its slice: the follow's backfill finds the author pulled.
  assert.equal(await timelineIds(fans[0].id), [], 'pulled: in no follower timeline')
  assert.equal(await timelineIds(fans[THRESHOLD].id), [], 'pulled before the follow was backfilled')
  assert.equal(await pendingBackfills(server, fans[THRESHOLD].id), [])
  for (const fan of fans) assert.equal(await feedIds(fan), [pending.id])
})

test('a failing slice is logged and retried, the server keeps serving, and nothing is lost', async () => {
  const [author, follower] = [await registerUser(server), await registerUser(server)]
  await followUser(server, follower.token, author.id)
  const release = await holdFanout(server)
  errors.length = 0
  const failed = nextError()
  const pending = await post(server, author.token, { content: 'while the fan-out fails' })
  clock.advance(1)
  await failed
  assert.match(errors[0], /fan-out failed/)
  // The runner tries again at its next poll (and fails again while held), without taking the process down.
  await nextError()
  assert.ok(errors.length >= 2)
  assert.equal(await feedIds(follower), [pending.id])
  const drained = await server.services.fanout.drain().then(
    () => null,
    (error: Error) => error,
  )
  assert.match(String(drained?.cause ?? drained), /fan-out held by the test/)
  await release()
  await server.services.fanout.drain()
  assert.equal(await timelineIds(follower.id), [pending.id])
  const { cursor, newest } = await fanoutProgress(server)
  assert.is(cursor, newest)
})

test('a process without the background loop (an embedded command) fans out its posts as it closes', async () => {
  const dataDir = tempDir()
  try {
    const config = loadConfig({ dataDir, rateLimits: false }, {})
    const services = await createServices(config, { logger: silentLogger, maintenance: false, readers: false })
    const client = (services.db as unknown as { $client: Client }).$client
    const insertUser = (name: string) =>
      client.execute({ sql: `insert into users (username, email, password_hash, created_at) values (?, ?, 'x', 0) returning id`, args: [name, `${name}@example.com`] })
    const authorId = Number((await insertUser('cli_author')).rows[0].id)
    const followerId = Number((await insertUser('cli_follower')).rows[0].id)
    await client.execute({ sql: 'insert into follows (follower_id, following_id, created_at) values (?, ?, 0)', args: [followerId, authorId] })
    await client.execute({ sql: 'update users set followers_count = 1 where id = ?', args: [authorId] })
    const created = await createPost(services.db, services.reads, authorId, { content: 'from the command line', is_public: true }, new Date(), services.fanout)
    await services.close()

    const db = new Database(path.join(dataDir, 'plaza.db'), { readonly: true })
    const cursor = (db.prepare('select post_id from timeline_fanout').get() as { post_id: number }).post_id
    const rows = db.prepare('select user_id from timelines where post_id = ? order by user_id').all(created.id) as Array<{ user_id: number }>
    db.close()
    assert.is(cursor, created.id)
    assert.equal(rows.map((row) => row.user_id), [authorId, followerId].sort((a, b) => a - b))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('the runner takes at most an eighth of a busy loop, and all of an idle one', () => {
  // Posts arriving: a 4 ms slice is followed by 28 ms for requests (less what they just took).
  assert.is(standBackMs(4, 0.2, true), 28 - 0.2)
  // Other work on the loop counts as busy too; a stand-back is capped (a slow slice on a cold disk).
  assert.is(standBackMs(4, 3, false), 25)
  assert.is(standBackMs(40, 0, true), 100)
  // The rest of the loop already took its share: straight on.
  assert.is(standBackMs(2, 20, true), 0)
  // Idle (nothing arrived, the loop's turn was empty): no stand-back at all.
  assert.is(standBackMs(5, 0.5, false), 0)
  // A sixteenth (each of two processes' runners): a 4 ms slice is followed by 60 ms.
  assert.is(standBackMs(4, 0, true, 1 / 16), 60)
})

test('with other processes on the database, an idle runner still leaves the write lock free between slices', () => {
  // Idle: alone it goes straight on; with others it waits LOCK_DOOR_MS (less what the loop's turn took),
  // longer than their millisecond between tries for the lock.
  assert.is(standBackMs(5, 0.5, false, 1 / 16), 0)
  assert.is(standBackMs(5, 0.5, false, 1 / 16, true), LOCK_DOOR_MS - 0.5)
  assert.ok(LOCK_DOOR_MS > 1)
  // A busy loop's stand-back is longer anyway; a turn that took the door's time already left it open.
  assert.is(standBackMs(4, 0, true, 1 / 16, true), 60)
  assert.is(standBackMs(2, 20, true, 1 / 8, true), 0)
})

test("the runners of a server's processes share one runner's eighth between them", async () => {
  assert.is(server.services.fanout.share, 1 / 8, 'one process')
  const dataDir = tempDir()
  try {
    const services = await createServices(loadConfig({ dataDir, rateLimits: false }, {}), { logger: silentLogger, readers: false, processes: 2 })
    try {
      assert.is(services.fanout.share, 1 / 16, 'each of plaza serve --workers 2')
    } finally {
      await services.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
