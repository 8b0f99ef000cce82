/**
 * Hashtag pages (GET /posts/hashtag/{tag}) with public, followers-only, private-account, blocked
 * and suspended authors, and trending hashtags (GET /search/trending) on an injected clock.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { trendingRefreshed } from '../../src/server/domain/hashtag-pages.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, post } from './helpers.js'

const API = '/api/mobile'

test('a hashtag page: public posts newest first, paged; not the followers-only ones, nor a private, blocked or suspended author\'s but for whom may see them', async () => {
  const server = await startTestServer()
  try {
    const [ann, bob, cat, dan, eve, viewer, fan] = await Promise.all(['ann_h', 'bob_h', 'cat_h', 'dan_h', 'eve_h', 'viewer_h', 'fan_h'].map((name) => registerUser(server, name)))
    const tagged = async (who: RegisteredUser, extra: Record<string, unknown> = {}) => (await post(server, who.token, { content: 'zq #ZqPage', ...extra })).id
    const a1 = await tagged(ann)
    const hidden = await tagged(ann, { is_public: false })
    const b1 = await tagged(bob)
    const c1 = await tagged(cat)
    const d1 = await tagged(dan)
    const e1 = await tagged(eve)
    const a2 = await tagged(ann)
    await followUser(server, fan.token, cat.id)
    await server.request('PUT', `${API}/user/update`, { token: cat.token, body: { is_private: true } })
    await server.request('POST', `${API}/user/block/${viewer.id}`, { token: dan.token })
    await server.services.db.run(sql`update users set suspended_at = 1 where id = ${eve.id}`)
    const page = async (who: RegisteredUser | null, path = '/posts/hashtag/zqpage') => (await server.request('GET', API + path, { token: who?.token })).body.data
    const ids = (data: { posts: Array<{ id: number }> }) => data.posts.map((p) => p.id)
    // The count is of posts anyone may see: ann's two, bob's, dan's, eve's (hidden per viewer, not uncounted); not cat's, private.
    const seen = await page(viewer)
    assert.equal([seen.tag, seen.posts_count, ids(seen)], ['zqpage', 5, [a2, b1, a1]])
    assert.equal(ids(await page(null)), [a2, d1, b1, a1], 'no token: the suspended author is hidden from everyone')
    assert.not.ok(ids(await page(null)).includes(e1))
    assert.equal(ids(await page(fan)), [a2, d1, c1, b1, a1], "a follower sees the private account's public post")
    assert.equal(ids(await page(ann)), [a2, d1, b1, a1], 'the author does not see her followers-only post here either')
    assert.not.ok(ids(await page(ann)).includes(hidden))
    assert.equal(ids(await page(cat)), [a2, d1, c1, b1, a1], 'the private account sees its own')
    // Pages of the filtered list, and the tag however it is written.
    const first = await page(viewer, '/posts/hashtag/%23ZQPAGE?limit=2')
    assert.equal([ids(first), first.has_more], [[a2, b1], true])
    assert.equal([ids(await page(viewer, '/posts/hashtag/zqpage?limit=2&page=2')), (await page(viewer, '/posts/hashtag/zqpage?limit=2&page=2')).has_more], [[a1], false])
    // Unknown, or used only where nobody else may look: an empty page, as if unused.
    await post(server, cat.token, { content: '#zqonlycat' })
    assert.equal(await page(viewer, '/posts/hashtag/zqonlycat'), { tag: 'zqonlycat', posts_count: 0, posts: [], page: 1, has_more: false })
    assert.equal(await page(viewer, '/posts/hashtag/nosuchtag'), { tag: 'nosuchtag', posts_count: 0, posts: [], page: 1, has_more: false })
    for (const bad of ['a-b', 'x'.repeat(101), '%23', '%20']) {
      const res = await server.request('GET', `${API}/posts/hashtag/${bad}`)
      assert.is(res.status, 400, bad)
    }
    assert.is((await server.request('GET', `${API}/posts/hashtag/zqpage?page=0`)).status, 400)
  } finally {
    await server.close()
  }
})

test('trending: ranked by recent distinct authors with a decay, one account counting once, private accounts not at all; recomputed each minute of the clock', async () => {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const users = await Promise.all(Array.from({ length: 8 }, (_, i) => registerUser(server, `trend${i}_t`)))
    const say = (i: number, tags: string) => post(server, users[i].token, { content: `talking ${tags}` })
    // Two days ago: four accounts on #zqold.
    clock.advance(-2 * 24 * 3600 * 1000)
    for (const i of [0, 1, 2, 3]) await say(i, '#zqold')
    clock.advance(2 * 24 * 3600 * 1000)
    // Now: three accounts on #zqnew, one account ten times on #zqspam, two on #zqpair, eight days ago nothing counts.
    for (const i of [4, 5, 6]) await say(i, '#zqnew')
    for (let n = 0; n < 10; n++) await say(7, '#zqspam')
    for (const i of [0, 1]) await say(i, '#zqpair')
    const trending = async (query = '') => (await server.request('GET', `${API}/search/trending${query}`)).body.data.hashtags
    // #zqold: 4 authors at a ninth each (4/9); #zqnew: 3 at 1; #zqpair: 2 at 1; #zqspam: one account, not a trend.
    assert.equal(await trending(), [
      { tag: 'zqnew', posts_count: 3, recent_authors: 3 },
      { tag: 'zqpair', posts_count: 2, recent_authors: 2 },
      { tag: 'zqold', posts_count: 4, recent_authors: 4 },
    ])
    assert.equal((await trending('?limit=1')).map((h: { tag: string }) => h.tag), ['zqnew'])
    // Within the minute the ranking stands, whatever is posted.
    for (const i of [2, 3, 4, 5]) await say(i, '#zqpair')
    assert.is((await trending())[1].tag, 'zqpair')
    assert.equal((await trending())[1].posts_count, 6, 'counts are read now, the order is the ranking\'s')
    // A minute later: the request that notices is served the old ranking and starts the new one.
    clock.advance(60_000)
    assert.is((await trending())[0].tag, 'zqnew')
    await trendingRefreshed(server.services.scans)
    assert.equal((await trending()).map((h: { tag: string; recent_authors: number }) => [h.tag, h.recent_authors]), [['zqpair', 6], ['zqnew', 3], ['zqold', 4]])
    // Going private takes an account's posts out of trends (and of the counts).
    for (const i of [0, 1, 2, 3, 4]) await server.request('PUT', `${API}/user/update`, { token: users[i].token, body: { is_private: true } })
    clock.advance(60_000)
    await trending()
    await trendingRefreshed(server.services.scans)
    assert.equal((await trending()).map((h: { tag: string; recent_authors: number }) => [h.tag, h.recent_authors]), [['zqnew', 2]])
    assert.is((await server.request('GET', `${API}/search/trending?limit=0`)).status, 400)
  } finally {
    await server.close()
  }
})

test.run()
