/**
 * Post search at scale (domain/search.ts): a short-lived cache of ids shared by all callers (rows
 * and `user_liked` still per caller), and ranking bounded to the newest SEARCH_WINDOW matches.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { PHRASE_STATS_TTL_MS, postSearchIds, postSearchIdsQuery, SEARCH_CACHE_TTL_MS, SEARCH_WINDOW, searchHashtags, searchPosts, toFtsQuery, USER_SEARCH_WINDOW } from '../../src/server/domain/search.js'
import { loadConfig } from '../../src/server/config.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { countingSelects, post, rawClient } from './helpers.js'

const clock = manualClock()
let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock })
})
test.after(async () => {
  await server.close()
})

const search = async (q: string, token?: string) => (await server.request('GET', `/api/mobile/search/posts?q=${encodeURIComponent(q)}`, { token })).body.data.posts

test("the cache holds ids: another caller never sees the first caller's user_liked; new posts show after the TTL", async () => {
  const author = await registerUser(server)
  const bob = await registerUser(server)
  const carol = await registerUser(server)
  const p = await post(server, author.token, { content: 'marmalade sandwich' })
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
  assert.equal((await search('marmalade', bob.token)).map((x: any) => [x.id, x.user_liked]), [[p.id, true]])
  assert.equal((await search('Marmalade', carol.token)).map((x: any) => [x.id, x.user_liked]), [[p.id, false]])
  assert.equal((await search('marmalade')).map((x: any) => [x.id, x.user_liked, x.likes_count]), [[p.id, false, 1]])
  await server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: carol.token })
  assert.equal((await search('marmalade', carol.token)).map((x: any) => [x.user_liked, x.likes_count]), [[true, 2]], 'rows are read per request')

  const q = await post(server, author.token, { content: 'more marmalade' })
  clock.advance(SEARCH_CACHE_TTL_MS - 1)
  assert.equal((await search('marmalade')).map((x: any) => x.id), [p.id], 'cached within the TTL')
  clock.advance(1)
  assert.equal((await search('marmalade')).map((x: any) => x.id).sort(), [p.id, q.id].sort())
})

test('concurrent identical searches share one id search on the workers, and a cache hit does not use them at all', async () => {
  const author = await registerUser(server)
  const p = await post(server, author.token, { content: 'damson cheese' })
  const scans = countingSelects(server.services.scans)
  const dbs = { reads: server.services.reads, scans: scans.db }
  const now = clock.clock()
  const answers = await Promise.all(Array.from({ length: 5 }, () => searchPosts(dbs, 'damson', null, 10, now)))
  assert.equal(answers.map((answer) => answer.posts.map((x) => x.id)), Array(5).fill([p.id]))
  assert.is(scans.selects(), 1, 'one id search for five concurrent callers, and their rows read inline')
  assert.equal((await searchPosts(dbs, 'damson', author.id, 10, now)).posts.map((x) => x.id), [p.id])
  assert.is(scans.selects(), 1, 'a cache hit reads its rows inline')
})

test('hashtag search: concurrent identical searches share one query, and its answer (counts included) is reused for the TTL', async () => {
  const author = await registerUser(server)
  await post(server, author.token, { content: 'a pot of #greengage' })
  const scans = countingSelects(server.services.scans)
  const now = clock.clock()
  const answers = await Promise.all(Array.from({ length: 5 }, () => searchHashtags(scans.db, 'greeng', 10, now)))
  assert.equal(answers.map((answer) => answer.hashtags), Array(5).fill([{ tag: 'greengage', posts_count: 1 }]))
  assert.is(scans.selects(), 1)
  await post(server, author.token, { content: 'another #greengage' })
  assert.equal((await searchHashtags(scans.db, 'greeng', 10, clock.clock())).hashtags, [{ tag: 'greengage', posts_count: 1 }], 'cached within the TTL')
  assert.is(scans.selects(), 1)
  clock.advance(SEARCH_CACHE_TTL_MS)
  assert.equal((await searchHashtags(scans.db, 'greeng', 10, clock.clock())).hashtags, [{ tag: 'greengage', posts_count: 2 }])
  assert.is(scans.selects(), 2)
})

test('a post that stopped being public is left out even from a cached answer', async () => {
  const author = await registerUser(server)
  const p = await post(server, author.token, { content: 'quince jelly' })
  assert.equal((await search('quince')).map((x: any) => x.id), [p.id])
  await rawClient(server).execute({ sql: 'update posts set is_public = 0 where id = ?', args: [p.id] })
  assert.equal(await search('quince'), [])
})

test('only the newest SEARCH_WINDOW matches are ranked: an older, better match is not found by a common word', async () => {
  const author = await registerUser(server)
  const client = rawClient(server)
  // Direct inserts (the FTS triggers index them) keep this fast; the API path is tested above.
  await client.execute({ sql: "insert into posts (user_id, content, created_at) values (?, 'zebra zebra zebra', ?)", args: [author.id, clock.clock().getTime()] })
  const old = Number((await client.execute('select max(id) as id from posts')).rows[0].id)
  await client.batch(
    Array.from({ length: SEARCH_WINDOW }, (_, i) => ({
      sql: 'insert into posts (user_id, content, created_at) values (?, ?, ?)',
      args: [author.id, `a zebra among many words number ${i}`, clock.clock().getTime() + 1],
    })),
    'write',
  )
  clock.advance(SEARCH_CACHE_TTL_MS)
  const found = await search('zebra')
  assert.is(found.length, 10)
  assert.not.ok(found.some((x: any) => x.id === old))
  // A rarer word still finds it.
  await client.execute({ sql: "update posts set content = 'zebra zebra zebra okapi' where id = ?", args: [old] })
  assert.equal((await search('zebra okapi')).map((x: any) => x.id), [old])
})

test('PLAZA_SEARCH_CACHE_TTL=0: every search is computed, so a new post is found at once; a value that is no duration is refused', async () => {
  const uncached = await startTestServer({ clock: clock.clock, env: { PLAZA_SEARCH_CACHE_TTL: '0' } })
  try {
    const author = await registerUser(uncached)
    const first = await post(uncached, author.token, { content: 'medlar tart' })
    const find = async () => (await uncached.request('GET', '/api/mobile/search/posts?q=medlar')).body.data.posts.map((x: any) => x.id)
    assert.equal(await find(), [first.id])
    const second = await post(uncached, author.token, { content: 'medlar' })
    assert.equal((await find()).sort(), [first.id, second.id].sort(), 'the clock has not moved')
  } finally {
    await uncached.close()
  }
  assert.throws(() => loadConfig({ rateLimits: false }, { PLAZA_SEARCH_CACHE_TTL: 'soon' }), /PLAZA_SEARCH_CACHE_TTL/)
  assert.is(loadConfig({ rateLimits: false }, { PLAZA_SEARCH_CACHE_TTL: '2' }).searchCacheTtlMs, 2000, 'seconds, as PLAZA_GENERATED_TTL')
  assert.is(loadConfig({ rateLimits: false }, {}).searchCacheTtlMs, SEARCH_CACHE_TTL_MS)
})

test('users by words: the best of the newest USER_SEARCH_WINDOW matches; a username prefix is found whatever their number', async () => {
  const client = rawClient(server)
  const insert = (username: string, fullName: string) => ({
    sql: "insert into users (username, email, password_hash, full_name, created_at) values (?, ?, 'x', ?, ?)",
    args: [username, `${username}@example.test`, fullName, clock.clock().getTime()],
  })
  await client.batch([insert('old_one', 'Quillon Quillon')], 'write')
  await client.batch(Array.from({ length: USER_SEARCH_WINDOW }, (_, i) => insert(`newer_${i}`, `Quillon Someone Else Entirely ${i}`)), 'write')
  const names = async (q: string) => (await server.request('GET', `/api/mobile/search/users?q=${encodeURIComponent(q)}&limit=50`)).body.data.users.map((u: any) => u.username)
  const found = await names('quillon')
  assert.is(found.length, 50)
  assert.not.ok(found.includes('old_one'), 'older than the window')
  assert.equal(await names('old_o'), ['old_one'], 'by its username prefix')
  await client.execute({ sql: "update users set full_name = 'Quillon Quillon Marrow' where username = 'old_one'", args: [] })
  assert.equal(await names('quillon marrow'), ['old_one'], 'a rarer word reaches it')
})

test("the ranking is FTS5's bm25 order exactly, computed without bm25(): one word, several, prefixes that overlap, diacritics, marks in the text", async () => {
  const author = await registerUser(server)
  const client = rawClient(server)
  // Seeded words: a few common, some rare, some sharing prefixes, repeated within posts, of
  // varied lengths (bm25 weighs matches by the post's length and the words' rarity).
  const words = ['kiwi', 'kiwi', 'kiwi', 'kiln', 'kilt', 'mango', 'mango', 'melon', 'café', 'Cafe', 'caffeine', 'fig', 'figs', 'apple', 'the', 'the', 'the', 'a', 'quite', 'long', 'words', 'here']
  let seed = 42
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const rows = Array.from({ length: 400 }, () => {
    const n = 1 + Math.floor(rand() * 14)
    return Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(rand() < 0.2 ? ', ' : ' ')
  })
  await client.batch(rows.map((content, i) => ({ sql: 'insert into posts (user_id, content, created_at) values (?, ?, ?)', args: [author.id, content, clock.clock().getTime() + (i % 7)] })), 'write')
  const db = server.services.scans
  const now = clock.clock().getTime()
  for (const q of ['kiwi', 'ki', 'kil', 'mango melon', 'kiwi mango', 'kiwi ki', 'cafe', 'café kiwi', 'caf fig', 'the kiwi', 'fig figs', 'the a', 'apple the mango']) {
    const fts = toFtsQuery(q)!
    const reference = (await postSearchIdsQuery(db, fts, 50)).map((row) => row.id)
    assert.ok(reference.length > 0, q)
    assert.equal(await postSearchIds(db, fts, 50, now), reference, q)
  }
  // A text holding the marks themselves: that search is ranked by bm25() itself, the same order.
  await client.execute({ sql: 'insert into posts (user_id, content, created_at) values (?, ?, ?)', args: [author.id, 'kiwi \u0001kiwi\u0002 mango', now] })
  for (const q of ['kiwi', 'kiwi mango']) {
    const fts = toFtsQuery(q)!
    assert.equal(await postSearchIds(db, fts, 50, now + PHRASE_STATS_TTL_MS), (await postSearchIdsQuery(db, fts, 50)).map((row) => row.id), q)
  }
})

test.run()
