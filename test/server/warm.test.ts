/**
 * Warming a write's pages before it takes the write lock (db/warm.ts): each write's warming read
 * visits every b-tree the write inserts into, but for those it provably does not touch or only
 * grows at their end; it runs before the write's transaction; and it never fails a write nor
 * holds one up behind a full queue.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ReaderPool } from '../../src/server/db/readers.js'
import { COLD_READ_MS, COLD_SHARE, Coldness, noWarm, poolWarm, WARM_PROBE_EVERY, WARM_QUEUE, type Pages, type Warm } from '../../src/server/db/warm.js'
import { follow, followPages, unfollowPages } from '../../src/server/domain/follows.js'
import { commentPages, likePages, unlikePages } from '../../src/server/domain/interactions.js'
import { backfillPages } from '../../src/server/domain/timelines.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { rawClient } from '../social/helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

async function planOf(query: Pages): Promise<string> {
  const result = await rawClient(server).execute({ sql: `EXPLAIN QUERY PLAN ${query.sql}`, args: query.params as never })
  return result.rows.map((row) => String(row.detail)).join('\n')
}

/** Every b-tree of `table` besides a rowid table's own: its indexes and a WITHOUT ROWID table's primary key. */
async function btreesOf(table: string): Promise<Array<{ name: string; primaryKey: boolean }>> {
  const result = await rawClient(server).execute({ sql: 'select name, origin from pragma_index_list(?)', args: [table] })
  return result.rows.map((row) => ({ name: String(row.name), primaryKey: row.origin === 'pk' }))
}

/**
 * Asserts that the warming read's plan searches every b-tree of `tables` but the `exempt` ones
 * (each with the reason the write needs no warming there), so a new index on a written table
 * fails here until its write warms it too.
 */
async function assertWarmsAll(what: string, query: Pages, tables: string[], exempt: Record<string, string>) {
  const plan = await planOf(query)
  const names: string[] = []
  for (const table of tables) {
    for (const btree of await btreesOf(table)) {
      names.push(btree.name)
      if (btree.name in exempt) continue
      const searched = btree.primaryKey ? new RegExp(`SEARCH ${table} USING (COVERING )?PRIMARY KEY`).test(plan) : plan.includes(`INDEX ${btree.name} `)
      assert.ok(searched, `${what}: the warming read does not search ${btree.primaryKey ? `${table}'s primary key` : btree.name}:\n${plan}`)
    }
  }
  for (const name of Object.keys(exempt)) assert.ok(names.includes(name), `${what}: ${name} (exempt) is not a b-tree of ${tables.join(', ')}`)
  assert.ok(names.length > Object.keys(exempt).length, `${what}: no b-tree checked`)
}

/** A follow, like or comment notification has no story; a follow's has no post either (partial indexes of non-null keys). */
const noStory = { notifications_story_idx: 'a notification about a story only' }

test('a follow warms the three b-trees of follows and the notification indexes; its backfill, the follower timeline', async () => {
  await assertWarmsAll('follow', followPages({ follower: 1, followee: 2 }), ['follows', 'notifications'], {
    ...noStory,
    notifications_post_idx: 'a follow notification names no post',
  })
  // The backfill is the fan-out runner's (a pending pair the follow records); it warms these before its slice.
  await assertWarmsAll('backfill', backfillPages({ follower: 1, followee: 2 }), ['timelines'], {})
  const plan = await planOf(backfillPages({ follower: 1, followee: 2 }))
  assert.match(plan, /INDEX posts_user_created_idx/, 'the followee posts the backfill reads')
  assert.match(plan, /SEARCH timeline_floors/, 'the follower floor')
})

test('an unfollow and an unlike warm the entries they delete', async () => {
  await assertWarmsAll('unfollow', unfollowPages({ follower: 1, followee: 2 }), ['follows', 'timelines'], {})
  assert.match(await planOf(unfollowPages({ follower: 1, followee: 2 })), /follows_following_created_idx \(following_id=\? AND created_at=\? AND follower_id=\?\)/, 'one exact index entry')
  assert.match(await planOf(unfollowPages({ follower: 1, followee: 2 })), /INDEX posts_user_created_idx/, 'the followee posts the prune reads')
  await assertWarmsAll('unlike', unlikePages({ user: 1, post: 2 }), ['likes'], {})
})

test('a like and a comment warm their own b-trees and the post author notification indexes', async () => {
  await assertWarmsAll('like', likePages({ user: 1, post: 2 }), ['likes', 'notifications'], noStory)
  await assertWarmsAll('comment', commentPages({ user: 1, post: 2, parent: null }), ['comments', 'notifications'], noStory)
  await assertWarmsAll('reply', commentPages({ user: 1, post: 2, parent: 3 }), ['comments', 'notifications'], noStory)
})

test('a warming read is a read: it answers on the same database and changes nothing', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const count = async () => Number((await rawClient(server).execute('select (select count(*) from follows) + (select count(*) from notifications) + (select count(*) from timelines) as n')).rows[0].n)
  const before = await count()
  for (const query of [followPages({ follower: alice.id, followee: bob.id }), unfollowPages({ follower: alice.id, followee: bob.id }), likePages({ user: alice.id, post: 1 }), unlikePages({ user: alice.id, post: 1 }), commentPages({ user: alice.id, post: 1, parent: null })]) {
    await server.services.warm(query)
    await rawClient(server).execute({ sql: query.sql, args: query.params as never })
  }
  assert.is(await count(), before)
})

test('a follow warms its pages before its transaction, and goes ahead whatever the warming did', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const followed = async () => (await rawClient(server).execute({ sql: 'select 1 from follows where follower_id = ? and following_id = ?', args: [alice.id, bob.id] })).rows.length > 0
  const seen: boolean[] = []
  const warm: Warm = async () => {
    seen.push(await followed())
  }
  const { db, reads, clock } = server.services
  const profile = await follow(db, reads, warm, server.services.fanout, alice.id, bob.id, clock())
  assert.equal(seen, [false], 'warmed once, before the follow row was written')
  assert.ok(await followed())
  assert.is(profile.followers_count, 1)
})

test('a warming read is rendered once and takes each call its values', async () => {
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  assert.ok(await server.request('POST', `/api/mobile/user/follow/${bob.id}`, { token: alice.token }).then((res) => res.status === 200))
  assert.is(followPages({ follower: alice.id, followee: bob.id }).sql, followPages({ follower: bob.id, followee: alice.id }).sql, 'one text for every pair')
  const firstColumn = async (pages: Pages) => (await rawClient(server).execute({ sql: pages.sql, args: pages.params as never })).rows[0][0]
  assert.is(Number(await firstColumn(followPages({ follower: alice.id, followee: bob.id }))), 1, 'alice follows bob: the pair is in the key')
  assert.is(await firstColumn(followPages({ follower: bob.id, followee: alice.id })), null, 'bob does not follow alice')
  assert.is(Number(await firstColumn(unfollowPages({ follower: alice.id, followee: bob.id }))) > 0, true, "the follow's created_at")
})

test('poolWarm resolves when its read fails, and skips the read when WARM_QUEUE reads already wait', async () => {
  if (server.services.warm === noWarm) return // a libsql server (PLAZA_TEST_DATABASE=sqld): nothing to warm
  // The server's own warmer: a read of a table that does not exist fails in the worker, and the warming still resolves.
  assert.is(await server.services.warm({ sql: 'select * from no_such_table', params: [] }), undefined)

  const asked: string[] = []
  const pool = {
    waiting: WARM_QUEUE,
    time: (text: string) => {
      asked.push(text)
      return Promise.resolve(0.01)
    },
  } as unknown as ReaderPool
  const warm = poolWarm(pool)
  await warm({ sql: 'select 1', params: [] })
  assert.equal(asked, [], 'a full queue: no read')
  ;(pool as { waiting: number }).waiting = WARM_QUEUE - 1
  await warm({ sql: 'select 1', params: [] })
  assert.equal(asked, ['select 1'])
})

/** How many of `writes` writes a gauge lets warm. */
function warmed(coldness: Coldness, writes: number): number {
  let n = 0
  for (let i = 0; i < writes; i++) if (coldness.shouldWarm()) n++
  return n
}

test('Coldness: every write warms while warming reads find pages on disk, one in WARM_PROBE_EVERY while they find them cached', () => {
  const coldness = new Coldness()
  assert.is(warmed(coldness, 100), 100, 'a process starts assuming its pages are cold')
  // Fast reads (pages in the system's cache) bring the share of cold reads down until writes only probe.
  let reads = 0
  while (coldness.share >= COLD_SHARE) {
    coldness.record(COLD_READ_MS / 10)
    reads++
  }
  assert.ok(reads > 50 && reads < 200, `${reads} fast reads to stop warming every write`)
  assert.is(warmed(coldness, 16 * WARM_PROBE_EVERY), 16, 'one write in WARM_PROBE_EVERY warms')
  // A few slow reads among fast ones (a core busy elsewhere) do not bring warming back.
  for (let i = 0; i < 100; i++) coldness.record(i % 10 === 0 ? COLD_READ_MS * 2 : COLD_READ_MS / 10)
  assert.ok(coldness.share < COLD_SHARE, `share ${coldness.share}`)
  assert.is(warmed(coldness, 4 * WARM_PROBE_EVERY), 4)
  // Pages leave the cache (another workload filled it): the probes' reads are slow, and every write warms again.
  reads = 0
  while (coldness.share < COLD_SHARE) {
    coldness.record(COLD_READ_MS * 4)
    reads++
  }
  assert.ok(reads <= 16, `${reads} slow reads to warm every write again`)
  assert.is(warmed(coldness, 50), 50)
})

test('poolWarm times its reads in the worker and warms only as often as its Coldness says', async () => {
  let ms = 0.02
  const asked: string[] = []
  const pool = {
    waiting: 0,
    time: (text: string) => {
      asked.push(text)
      return Promise.resolve(ms)
    },
  } as unknown as ReaderPool
  const coldness = new Coldness()
  const warm = poolWarm(pool, { coldness })
  for (let i = 0; i < 200; i++) await warm({ sql: 'select 1', params: [] })
  assert.ok(coldness.share < COLD_SHARE, 'fast reads recorded')
  const before = asked.length
  for (let i = 0; i < 10 * WARM_PROBE_EVERY; i++) await warm({ sql: 'select 1', params: [] })
  assert.is(asked.length - before, 10, 'probes only')
  ms = COLD_READ_MS * 3
  for (let i = 0; i < 20 * WARM_PROBE_EVERY; i++) await warm({ sql: 'select 1', params: [] })
  assert.ok(coldness.share >= COLD_SHARE, 'slow probes recorded')
  const cold = asked.length
  for (let i = 0; i < 10; i++) await warm({ sql: 'select 1', params: [] })
  assert.is(asked.length - cold, 10, 'every write warms again')

  // The server's own pool: a real read, timed where it ran.
  if (server.services.warm === noWarm) return // a libsql server (PLAZA_TEST_DATABASE=sqld): nothing to warm
  const { ReaderPool: Pool } = await import('../../src/server/db/readers.js')
  const real = new Pool(server.dataDir + '/plaza.db', 1)
  try {
    const took = await real.time('select count(*) from users', [])
    assert.ok(typeof took === 'number' && took >= 0 && took < 5000, `took ${took} ms`)
  } finally {
    await real.close()
  }
})

test.run()
