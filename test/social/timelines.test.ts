/**
 * Home timelines (domain/timelines.ts): the feed read from fan-out-on-write timelines must equal
 * the feed computed directly from follows and posts, whatever happened before: follows,
 * unfollows, public and non-public posts, accounts crossing the fan-out threshold, trimmed
 * timelines and their floors, posts still waiting for their fan-out. A test that reads the
 * `timelines` table after a post drains the fan-out first (the runner writes it after the post).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createPost, directFeedQuery, pageOf, postsWithMedia } from '../../src/server/domain/posts.js'
import { TIMELINE_CAP, TRIM_EVERY, trimDue } from '../../src/server/domain/timelines.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { fanoutProgress, followUser, holdFanout, pendingBackfills, post, rawClient, timelineIdsOf, unfollowUser } from './helpers.js'

/** Accounts with more than 3 followers are pulled at read time, so the churn test has some. */
const THRESHOLD = 3
const clock = manualClock()
let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock, env: { PLAZA_FANOUT_MAX_FOLLOWERS: String(THRESHOLD) } })
})
test.after(async () => {
  await server.close()
})

type User = Awaited<ReturnType<typeof registerUser>>

/** mulberry32: a small seeded PRNG, so a failure replays. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function feed(user: User, page: number, limit: number) {
  const res = await server.request('GET', `/api/mobile/posts/feed?page=${page}&limit=${limit}`, { token: user.token })
  assert.is(res.status, 200)
  return res.body.data
}

/** The feed as the direct query over follows and posts computes it (the definition). */
async function expectedFeed(user: User, page: number, limit: number) {
  const paging = { page, limit }
  const { items, has_more } = pageOf(await directFeedQuery(server.services.db, user.id, paging), paging, (row) => row)
  return { posts: await postsWithMedia(server.services.db, items), page, has_more }
}

async function assertFeedsExact(users: User[], pagings: Array<[number, number]>, context: string) {
  for (const user of users) {
    for (const [page, limit] of pagings) {
      assert.equal(await feed(user, page, limit), await expectedFeed(user, page, limit), `${context}: user ${user.id} page ${page} limit ${limit}`)
    }
  }
}

const timelineIds = (userId: number) => timelineIdsOf(server, userId)
const unfollow = (by: User, target: User) => unfollowUser(server, by.token, target.id)

test('backfill on follow (non-public posts included), prune on unfollow (public ones too)', async () => {
  const author = await registerUser(server)
  const reader = await registerUser(server)
  const open = await post(server, author.token, { content: 'open' })
  clock.advance(1)
  const closed = await post(server, author.token, { content: 'closed', is_public: false })
  clock.advance(1)
  assert.equal(await timelineIds(reader.id), [])
  await followUser(server, reader.token, author.id)
  // The feed has them at once (merged while the backfill is pending), the timeline once the runner has run.
  assert.equal((await feed(reader, 1, 20)).posts.map((p: any) => p.id), [closed.id, open.id])
  await server.services.fanout.drain()
  assert.equal(await timelineIds(reader.id), [closed.id, open.id])
  assert.equal((await feed(reader, 1, 20)).posts.map((p: any) => p.id), [closed.id, open.id])
  const mine = await post(server, reader.token, { content: 'mine' })
  await unfollow(reader, author)
  await server.services.fanout.drain()
  assert.equal(await timelineIds(reader.id), [mine.id])
  assert.equal((await feed(reader, 1, 20)).posts.map((p: any) => p.id), [mine.id])
})

test('an account above the fan-out threshold is pulled at read time and merged, once', async () => {
  const star = await registerUser(server)
  const fans = [await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server)]
  for (const fan of fans.slice(0, THRESHOLD)) await followUser(server, fan.token, star.id)
  const before = await post(server, star.token, { content: 'fanned out' })
  clock.advance(1)
  await followUser(server, fans[THRESHOLD].token, star.id) // now THRESHOLD + 1 followers
  const after = await post(server, star.token, { content: 'pulled' })
  clock.advance(1)
  await server.services.fanout.drain()
  const pulled = await rawClient(server).execute({ sql: 'select count(*) as n from timeline_pulled_authors where user_id = ?', args: [star.id] })
  assert.is(Number(pulled.rows[0].n), 1)
  for (const fan of fans) {
    assert.not.ok((await timelineIds(fan.id)).includes(after.id), 'not fanned out')
    assert.equal((await feed(fan, 1, 20)).posts.map((p: any) => p.id), [after.id, before.id])
  }
  assert.ok((await timelineIds(star.id)).includes(after.id), "the author's own timeline still gets it")
  // Back under the threshold the account stays pulled: its later posts are in no timeline.
  await unfollow(fans[0], star)
  const later = await post(server, star.token, { content: 'still pulled' })
  await server.services.fanout.drain()
  assert.not.ok((await timelineIds(fans[1].id)).includes(later.id))
  assert.equal((await feed(fans[1], 1, 20)).posts.map((p: any) => p.id), [later.id, after.id, before.id])
  assert.equal((await feed(fans[0], 1, 20)).posts, [])
  await assertFeedsExact(fans, [[1, 2], [2, 2]], 'pulled')
})

test('churn: after random follows, unfollows, public and non-public posts, every feed page equals the direct query', async () => {
  const random = prng(20261123)
  const users: User[] = []
  for (let i = 0; i < 9; i++) users.push(await registerUser(server))
  const pick = () => users[Math.floor(random() * users.length)]
  for (let step = 0; step < 260; step++) {
    const roll = random()
    const a = pick()
    const b = pick()
    if (roll < 0.35 && a !== b) await followUser(server, a.token, b.id)
    else if (roll < 0.5 && a !== b) await unfollow(a, b)
    else await post(server, a.token, { content: `step ${step}`, is_public: random() < 0.7 })
    // Often no time passes: ties in created_at must break by id the same way on both paths.
    if (random() < 0.5) clock.advance(Math.floor(random() * 3))
    if (step % 65 === 64) await assertFeedsExact(users, [[1, 5]], `step ${step}`)
  }
  await assertFeedsExact(users, [[1, 5], [2, 5], [3, 7], [1, 50], [2, 50]], 'end')
})

/**
 * The first rounds run with the fan-out held, so their posts are pending while follows backfill
 * and unfollows prune around them; the later ones with the runner fanning out in the background
 * and a drain in flight beside the requests. Every feed is checked in both states.
 */
test('concurrent churn: follows, unfollows, posts and the fan-out in flight together leave exact feeds and counters', async () => {
  const random = prng(7)
  const users: User[] = []
  for (let i = 0; i < 8; i++) users.push(await registerUser(server))
  const pick = () => users[Math.floor(random() * users.length)]
  let release: (() => Promise<void>) | null = await holdFanout(server)
  for (let round = 0; round < 12; round++) {
    const ops: Array<Promise<unknown>> = []
    for (let i = 0; i < 10; i++) {
      const [a, b, roll] = [pick(), pick(), random()]
      if (roll < 0.4 && a !== b) ops.push(followUser(server, a.token, b.id))
      else if (roll < 0.6 && a !== b) ops.push(unfollow(a, b))
      else ops.push(post(server, a.token, { content: `round ${round}`, is_public: random() < 0.7 }))
    }
    if (!release && round % 2 === 0) ops.push(server.services.fanout.drain())
    await Promise.all(ops)
    if (random() < 0.5) clock.advance(1)
    if (round === 5) {
      const { cursor, newest } = await fanoutProgress(server)
      assert.ok(newest - cursor > 10, `a backlog of ${newest - cursor} posts`)
      await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'concurrent churn, fan-out held')
      await release!()
      release = null
    }
  }
  await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'concurrent churn, fan-out running')
  await server.services.fanout.drain()
  await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'concurrent churn, drained')
  const ids = users.map((u) => u.id).join(',')
  const counters = await rawClient(server).execute(`
    select u.id, u.followers_count = (select count(*) from follows where following_id = u.id)
             and u.following_count = (select count(*) from follows where follower_id = u.id)
             and u.posts_count = (select count(*) from posts where user_id = u.id) as exact
    from users u where u.id in (${ids})`)
  for (const row of counters.rows) assert.is(Number(row.exact), 1, `counters of user ${row.id}`)
})

test('a trimmed timeline keeps a floor; pages below it, and a timeline thinned by an unfollow, still answer exactly', async () => {
  const prolific = await registerUser(server)
  const friend = await registerUser(server)
  const reader = await registerUser(server)
  await followUser(server, reader.token, prolific.id)
  await followUser(server, reader.token, friend.id)
  const db = server.services.db
  const write = (author: User, content: string) => createPost(db, server.services.reads, author.id, { content, is_public: true }, clock.clock(), server.services.fanout)
  for (let i = 0; i < 10; i++) {
    await write(friend, `friend ${i}`)
    clock.advance(1)
  }
  for (let i = 0; i < TIMELINE_CAP + 100; i++) {
    await write(prolific, `prolific ${i}`)
    clock.advance(1)
    // Exact while it fills up too; the request also keeps the HTTP connection from idling out
    // (a keep-alive socket the server closes as fetch reuses it fails the next request).
    if (i % 100 === 99) await assertFeedsExact([reader], [[1, 5]], `filling, ${i + 1} posts`)
  }
  await server.services.fanout.drain()
  const floor = await rawClient(server).execute({ sql: 'select created_at from timeline_floors where user_id = ?', args: [reader.id] })
  assert.is(floor.rows.length, 1, 'the timeline was trimmed')
  const kept = await timelineIds(reader.id)
  assert.ok(kept.length >= TIMELINE_CAP - 1 && kept.length < TIMELINE_CAP + 100, String(kept.length))
  await assertFeedsExact([reader], [[1, 50], [16, 50], [17, 50], [18, 50]], 'trimmed')

  // A new follower is backfilled with the newest TIMELINE_CAP posts and a floor where they stop.
  const late = await registerUser(server)
  await followUser(server, late.token, prolific.id)
  await assertFeedsExact([late], [[1, 50], [16, 50], [17, 50]], 'backfill pending')
  await server.services.fanout.drain()
  assert.is((await timelineIds(late.id)).length, TIMELINE_CAP)
  await assertFeedsExact([late], [[1, 50], [16, 50], [17, 50]], 'backfilled')

  // Unfollowing the prolific account leaves a few entries above the floor: the direct query answers.
  await unfollow(reader, prolific)
  await assertFeedsExact([reader], [[1, 5], [2, 5], [3, 5]], 'thinned')
})

test('trimDue: always from TRIM_EVERY entries added, never for none, and otherwise for `added` keys in TRIM_EVERY', () => {
  for (let key = 0; key < 3 * TRIM_EVERY; key++) {
    assert.is(trimDue(key, 0), false)
    assert.is(trimDue(key, TRIM_EVERY), true)
    assert.is(trimDue(key, TIMELINE_CAP), true)
  }
  for (let added = 1; added < TRIM_EVERY; added++) {
    const due = Array.from({ length: TRIM_EVERY }, (_, i) => trimDue(1000 + i, added)).filter(Boolean).length
    assert.is(due, added, `added ${added}`)
  }
})

test('a backfill of a few posts lets a full timeline overshoot its cap; one of TRIM_EVERY or more trims it back, and feeds stay exact', async () => {
  const db = server.services.db
  const write = async (author: User, count: number) => {
    for (let i = 0; i < count; i++) {
      await createPost(db, server.services.reads, author.id, { content: `${author.username} ${i}`, is_public: true }, clock.clock(), server.services.fanout)
      clock.advance(1)
    }
  }
  const reader = await registerUser(server)
  const prolific = await registerUser(server)
  await write(prolific, TIMELINE_CAP + 10)
  // Fanned out before the follow, so the backfill alone fills the timeline.
  await server.services.fanout.drain()
  await followUser(server, reader.token, prolific.id)
  await server.services.fanout.drain()
  const floorOf = async () => (await rawClient(server).execute({ sql: 'select created_at from timeline_floors where user_id = ?', args: [reader.id] })).rows[0]?.created_at
  assert.is((await timelineIds(reader.id)).length, TIMELINE_CAP)
  const floor = await floorOf()
  assert.ok(floor !== undefined, 'the backfill past the cap set a floor')

  // An account with no posts: nothing to copy, nothing pending after the runner.
  const silent = await registerUser(server)
  await followUser(server, reader.token, silent.id)
  await server.services.fanout.drain()
  assert.is((await timelineIds(reader.id)).length, TIMELINE_CAP)
  assert.equal(await pendingBackfills(server, reader.id), [])

  // One post, from an account whose pair with the reader is not due a trim (one pair in TRIM_EVERY
  // is; a few tries find one that is not): the timeline grows past the cap.
  let few = await registerUser(server)
  for (let tries = 1; trimDue(reader.id + few.id, 1) && tries < 4; tries++) few = await registerUser(server)
  await write(few, 1)
  await server.services.fanout.drain()
  await followUser(server, reader.token, few.id)
  await server.services.fanout.drain()
  assert.is((await timelineIds(reader.id)).length, TIMELINE_CAP + 1)
  assert.is(await floorOf(), floor)
  await assertFeedsExact([reader], [[1, 50], [8, 50], [9, 50]], 'over the cap')

  // TRIM_EVERY posts or more always trim: back to the cap, the floor raised.
  const many = await registerUser(server)
  await write(many, TRIM_EVERY + 8)
  await server.services.fanout.drain()
  await followUser(server, reader.token, many.id)
  await server.services.fanout.drain()
  assert.is((await timelineIds(reader.id)).length, TIMELINE_CAP)
  assert.ok(Number(await floorOf()) > Number(floor), 'the trim raised the floor')
  await assertFeedsExact([reader], [[1, 50], [8, 50], [9, 50]], 'trimmed again')
})

/**
 * Issue 12's churn with issue 13's relations: follows, unfollows, blocks, unblocks, mutes,
 * unmutes, posts, likes and deletions, concurrently and with the fan-out held for the first half.
 * Feeds must equal the direct query (which leaves muted authors out; a block removes follows),
 * every counter must equal its rows, no follow may survive a block, and no timeline may hold a
 * deleted post or one its owner muted.
 */
test('concurrent churn with blocks, mutes and deletions keeps feeds, counters and timelines exact', async () => {
  const random = prng(1313)
  const users: User[] = []
  for (let i = 0; i < 8; i++) users.push(await registerUser(server))
  const pick = () => users[Math.floor(random() * users.length)]
  const mine = new Map<number, number[]>(users.map((u) => [u.id, []]))
  const api = (method: string, path: string, user: User, body?: unknown) => server.request(method, `/api/mobile${path}`, { token: user.token, body })
  let release: (() => Promise<void>) | null = await holdFanout(server)
  const refused: number[] = []
  for (let round = 0; round < 14; round++) {
    const ops: Array<Promise<{ status: number }>> = []
    for (let i = 0; i < 12; i++) {
      const [a, b, roll] = [pick(), pick(), random()]
      const other = a !== b
      if (roll < 0.2 && other) ops.push(api('POST', `/user/follow/${b.id}`, a))
      else if (roll < 0.28 && other) ops.push(api('DELETE', `/user/unfollow/${b.id}`, a))
      else if (roll < 0.34 && other) ops.push(api('POST', `/user/block/${b.id}`, a))
      else if (roll < 0.4 && other) ops.push(api('DELETE', `/user/unblock/${b.id}`, a))
      else if (roll < 0.46 && other) ops.push(api('POST', `/user/mute/${b.id}`, a))
      else if (roll < 0.5 && other) ops.push(api('DELETE', `/user/unmute/${b.id}`, a))
      else if (roll < 0.6 && mine.get(b.id)!.length > 0) {
        const posts = mine.get(b.id)!
        ops.push(api('POST', `/interactions/like/${posts[Math.floor(random() * posts.length)]}`, a))
      } else if (roll < 0.7 && mine.get(a.id)!.length > 0) {
        const posts = mine.get(a.id)!
        const [victim] = posts.splice(Math.floor(random() * posts.length), 1)
        ops.push(api('DELETE', `/posts/${victim}`, a))
      } else {
        ops.push(
          post(server, a.token, { content: `round ${round}`, is_public: random() < 0.7 }).then((created) => {
            mine.get(a.id)!.push(created.id)
            return { status: 201 }
          }),
        )
      }
    }
    if (!release && round % 2 === 0) ops.push(server.services.fanout.drain().then(() => ({ status: 200 })))
    // A follow, like or unfollow may meet a block or a deletion made in the same round (404); nothing else may fail.
    for (const answer of await Promise.all(ops)) if (answer.status >= 300) refused.push(answer.status)
    if (random() < 0.5) clock.advance(1)
    if (round === 6) {
      await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'churn with relations, fan-out held')
      await release!()
      release = null
    }
  }
  assert.ok(refused.every((status) => status === 404), `only 404s refused: ${refused.join(',')}`)
  await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'churn with relations, fan-out running')
  await server.services.fanout.drain()
  await assertFeedsExact(users, [[1, 5], [2, 5], [1, 50]], 'churn with relations, drained')

  const ids = users.map((u) => u.id).join(',')
  const raw = rawClient(server)
  const drift = await raw.execute(`
    select 'user ' || u.id as what from users u where u.id in (${ids}) and not (
      u.followers_count = (select count(*) from follows where following_id = u.id)
      and u.following_count = (select count(*) from follows where follower_id = u.id)
      and u.posts_count = (select count(*) from posts where user_id = u.id))
    union all
    select 'post ' || p.id from posts p where p.user_id in (${ids}) and not (
      p.likes_count = (select count(*) from likes where post_id = p.id)
      and p.comments_count = (select count(*) from comments where post_id = p.id))`)
  assert.equal(drift.rows.map((row) => row.what), [], 'counters equal their rows')
  const blockedFollows = await raw.execute(`
    select count(*) as n from follows f join blocks b
      on (b.blocker_id = f.follower_id and b.blocked_id = f.following_id) or (b.blocker_id = f.following_id and b.blocked_id = f.follower_id)`)
  assert.is(Number(blockedFollows.rows[0].n), 0, 'no follow survives a block')
  const stray = await raw.execute(`
    select t.user_id, t.post_id from timelines t left join posts p on p.id = t.post_id
    where t.user_id in (${ids}) and (p.id is null or exists (select 1 from mutes m where m.muter_id = t.user_id and m.muted_id = p.user_id))`)
  assert.equal(stray.rows, [], 'no timeline holds a deleted or muted post')
  const relations = await raw.execute(`select (select count(*) from blocks) as blocks, (select count(*) from mutes) as mutes`)
  assert.ok(Number(relations.rows[0].blocks) > 0 && Number(relations.rows[0].mutes) > 0, 'the churn left some blocks and mutes standing')
})

test.run()
