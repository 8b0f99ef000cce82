import { and, asc, desc, inArray, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { Post, UserSummary } from '../../shared/types.js'
import type { ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { posts, users } from '../db/schema.js'
import { hashtagSearchQuery, prefixEnd } from './hashtags.js'
import { postPage, postsWithMedia, publicPostsByIds } from './posts.js'
import { authorVisibleTo } from './relations.js'
import { toUserSummary, userSummaryColumns } from './users.js'
import { withMedia } from './media.js'

/**
 * The FTS5 tables of migration 0001_search (external content, kept in sync by triggers). Declared
 * here, not in schema.ts, so drizzle-kit leaves them to the hand-written migration.
 */
const postsFts = sqliteTable('posts_fts', { rowid: integer('rowid'), content: text('content'), rank: real('rank') })
const usersFts = sqliteTable('users_fts', { rowid: integer('rowid'), username: text('username'), fullName: text('full_name'), rank: real('rank') })

/**
 * Turns what a person typed into a safe FTS5 query: the words (as the unicode61 tokenizer splits
 * them), each quoted, each a prefix ("cof tim" finds "coffee time"), all required. Operators and
 * quotes in the input are plain text. Null when the input has no word at all.
 */
export function toFtsQuery(q: string): string | null {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu)
  if (!words) return null
  return words
    .slice(0, 16)
    .map((word) => `"${word}"*`)
    .join(' ')
}

type Param = number | string | Placeholder

/**
 * How many of the accounts whose name or username has q's words are scored (bm25), newest
 * accounts first: a first name shared by 3,000 of 100,000 accounts took 5-10 ms to score whole.
 * Usernames starting with q are found by their index whatever their number.
 */
export const USER_SEARCH_WINDOW = 250

/**
 * Users whose username starts with `lower` (below `end`, its prefixEnd), or whose name or username
 * has words matching `fts` (when there is one); values or placeholders.
 */
function userSearchSelect(db: ReadDb, p: { lower: Param; end: Param; fts: Param | null; viewer: number | Placeholder | null; limit: number | Placeholder }) {
  const usernameLower = sql`lower(${users.username})`
  // Each source is bounded by the limit on its own index before the union is ranked.
  const byPrefix = sql`select id from (select ${users.id} as id from ${users} where ${usernameLower} >= ${p.lower} and ${usernameLower} < ${p.end} order by ${usernameLower} limit ${p.limit})`
  // The words' matches: the best (bm25) of the newest USER_SEARCH_WINDOW accounts matching.
  const byWords =
    p.fts !== null
      ? sql` union select id from (select id from (select rowid as id, rank from ${usersFts} where ${usersFts} match ${p.fts} order by rowid desc limit ${USER_SEARCH_WINDOW}) order by rank limit ${p.limit})`
      : sql``
  return db
    .select(userSummaryColumns(p.viewer))
    .from(users)
    .where(and(inArray(users.id, sql`(${byPrefix}${byWords})`), authorVisibleTo(p.viewer ?? 0)))
    .orderBy(desc(sql`${usernameLower} = ${p.lower}`), desc(sql`${usernameLower} >= ${p.lower} and ${usernameLower} < ${p.end}`), desc(users.followersCount), asc(users.id))
    .limit(p.limit)
}

/** Users whose username starts with q, or whose name or username has words starting with q's words. */
export function userSearchQuery(db: ReadDb, q: string, viewerId: number | null, limit: number) {
  const lower = q.toLowerCase()
  return userSearchSelect(db, { lower, end: prefixEnd(lower), fts: toFtsQuery(q), viewer: viewerId, limit })
}

const userSearchPlaceholders = { lower: sql.placeholder('lower'), end: sql.placeholder('end'), viewer: sql.placeholder('viewer'), limit: sql.placeholder('limit') }
const usersByPrefix = prepared((db) => userSearchSelect(db, { ...userSearchPlaceholders, fts: null }).prepare())
const usersByPrefixOrWords = prepared((db) => userSearchSelect(db, { ...userSearchPlaceholders, fts: sql.placeholder('fts') }).prepare())

/**
 * How many matches a post search ranks: the newest SEARCH_WINDOW matching posts (FTS5 walks the
 * match's doclist from the highest rowid down and stops there), so a word in half the posts
 * costs the same as a rare one. Older matches are still found by a more precise query.
 */
export const SEARCH_WINDOW = 250

/**
 * The ids of public posts matching q's words: of the newest SEARCH_WINDOW matches, best match
 * (bm25) first, then newest, with FTS5's own `rank`. The reference definition of the ranking:
 * `postSearchIds` computes the same order without FTS5's bm25(), whose document frequencies
 * read every matching row of the whole index (tests compare the two).
 */
export function postSearchIdsQuery(db: ReadDb, fts: string, limit: number) {
  const ranked = sql`
    select p.id from (
      select rowid as id, rank from ${postsFts} where ${postsFts} match ${fts} order by rowid desc limit ${SEARCH_WINDOW}
    ) matches cross join ${posts} p on p.id = matches.id
    where p.is_public = 1
    order by matches.rank, p.created_at desc, p.id desc
    limit ${limit}`
  // Through the query builder, so every driver (the write client, the reader pool) maps the rows.
  return db.select({ id: sql<number>`id`.mapWith(Number) }).from(sql`(${ranked})`)
}

/** The marks highlight() puts around each matched token. */
const OPEN = '\u0001'
const CLOSE = '\u0002'

/**
 * The newest SEARCH_WINDOW matches of `fts` with what bm25 needs, as one JSON text (one value
 * through the driver, not four per row): `[id, created_at, hits, docsize]` per public match, where
 * `hits` is the number of matched tokens (one phrase) or the highlighted text (several: the
 * caller tells the phrases apart), and `docsize` the hex of the row's FTS5 token count (a varint).
 * The second value is the hex of FTS5's averages record: the row count and total tokens, the
 * statistics bm25 divides by, from the same snapshot; the third is non-zero when a match's text
 * itself holds one of the marks (a post may hold control characters), which the caller then
 * cannot count, and ranks that search with FTS5's own bm25(). The work is the window's: no statement here
 * reads beyond the SEARCH_WINDOW newest matches, unlike FTS5's bm25(), which counts every
 * matching row of the index for each phrase (about 90% of a million posts for "the").
 */
export function postCandidatesQuery(fts: string, phrases: number): SQL {
  const hits =
    phrases === 1 ? sql`length(matches.h) - length(replace(matches.h, char(1), ''))` : sql`matches.h`
  return sql`
    select json_group_array(json_array(matches.id, p.created_at, ${hits}, hex(d.sz))),
      (select hex(block) from posts_fts_data where id = 1),
      max(instr(p.content, char(1)) + instr(p.content, char(2)))
    from (
      select rowid as id, highlight(posts_fts, 0, char(1), char(2)) as h from ${postsFts} where ${postsFts} match ${fts} order by rowid desc limit ${SEARCH_WINDOW}
    ) matches cross join ${posts} p on p.id = matches.id cross join posts_fts_docsize d on d.id = matches.id
    where p.is_public = 1`
}

/** SQLite's varints (FTS5 records use them): big-endian groups of 7 bits, the high bit says more follow, the 9th byte has 8. */
function varints(hex: string): number[] {
  const out: number[] = []
  let value = 0
  let length = 0
  for (let i = 0; i + 1 < hex.length; i += 2) {
    const byte = parseInt(hex.slice(i, i + 2), 16)
    length++
    if (length === 9) {
      value = value * 256 + byte
    } else {
      value = value * 128 + (byte & 0x7f)
      if (byte & 0x80) continue
    }
    out.push(value)
    value = 0
    length = 0
  }
  return out
}

/**
 * How FTS5's unicode61 tokenizer (remove_diacritics 2) folds a token, for telling which phrase a
 * highlighted token matched: case folded, diacritics removed. Exact for what the query words can
 * be (toFtsQuery: letters and digits); where it and SQLite's tables disagree on a rare character,
 * a token counts for a phrase by the token's text, which only one multi-word query can notice.
 */
function fold(token: string): string {
  return token.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/** The phrases of a toFtsQuery text: its quoted words. */
function phrasesOf(fts: string): string[] {
  return [...fts.matchAll(/"([^"]*)"\*/g)].map((m) => m[1])
}

/** Per-phrase hit counts of a highlighted text: each marked token counts for every phrase it starts with (FTS5 counts an instance per phrase). */
function phraseHits(highlighted: string, phrases: string[]): number[] {
  const hits = phrases.map(() => 0)
  let at = highlighted.indexOf(OPEN)
  while (at >= 0) {
    const end = highlighted.indexOf(CLOSE, at + 1)
    if (end < 0) break
    const token = fold(highlighted.slice(at + 1, end))
    for (let i = 0; i < phrases.length; i++) if (token.startsWith(phrases[i])) hits[i]++
    at = highlighted.indexOf(OPEN, end + 1)
  }
  return hits
}

/**
 * Document frequencies (matching rows of the whole index) per phrase, which bm25's IDF weighs
 * phrases by when a query has several (with one, every row shares the one weight and the order
 * does not depend on it). Counting reads every matching row, so a count is kept for
 * PHRASE_STATS_TTL_MS per database handle: statistics, not answers (a count a minute old moves an
 * IDF by the posts of that minute, against a million).
 */
export const PHRASE_STATS_TTL_MS = 60_000
const PHRASE_STATS_SIZE = 2000
const phraseStats = new WeakMap<ReadDb, Map<string, { at: number; value: Promise<number> }>>()

function phraseCount(db: ReadDb, phrase: string, now: number): Promise<number> {
  let stats = phraseStats.get(db)
  if (!stats) phraseStats.set(db, (stats = new Map()))
  const hit = stats.get(phrase)
  stats.delete(phrase)
  if (hit && now >= hit.at && now - hit.at < PHRASE_STATS_TTL_MS) {
    stats.set(phrase, hit)
    return hit.value
  }
  const value = Promise.resolve(db.values<[number]>(sql`select count(*) from ${postsFts} where ${postsFts} match ${`"${phrase}"*`}`)).then((rows) => Number(rows[0][0]))
  const entry = { at: now, value }
  stats.set(phrase, entry)
  value.catch(() => stats.get(phrase) === entry && stats.delete(phrase))
  if (stats.size > PHRASE_STATS_SIZE) stats.delete(stats.keys().next().value!)
  return value
}

/**
 * The ids of public posts matching `fts` (a toFtsQuery text), ranked exactly as
 * postSearchIdsQuery ranks them: of the newest SEARCH_WINDOW matches, best bm25 first (FTS5's
 * formula, k1 = 1.2, b = 0.75, its IDF floor of 1e-6, the same arithmetic), then newest. The
 * window's rows come with their matched-token counts (highlight) and sizes (the docsize table);
 * the row count and average size come from FTS5's averages record in the same statement.
 */
export async function postSearchIds(db: ReadDb, fts: string, limit: number, now: number): Promise<number[]> {
  const phrases = phrasesOf(fts)
  const folded = phrases.map(fold)
  const [rows, counts] = await Promise.all([
    db.values<[string | null, string | null, number | null]>(postCandidatesQuery(fts, phrases.length)),
    phrases.length > 1 ? Promise.all(phrases.map((phrase) => phraseCount(db, phrase, now))) : Promise.resolve([0]),
  ])
  // By index: a libsql client's rows are array-like but not iterable (the readers' are arrays).
  const first = rows[0]
  const [json, averages, marked] = first ? [first[0], first[1], first[2]] : [null, null, null]
  if (marked) return (await postSearchIdsQuery(db, fts, limit)).map((row) => row.id)
  const candidates = JSON.parse(json ?? '[]') as Array<[number, number, number | string, string]>
  if (candidates.length === 0) return []
  const [nRow, nToken] = varints(averages ?? '')
  const avgdl = nToken / nRow
  const idf = counts.map((nHit) => {
    const value = Math.log((nRow - nHit + 0.5) / (nHit + 0.5))
    return value <= 0 ? 1e-6 : value
  })
  const k1 = 1.2
  const b = 0.75
  const scored = candidates.map(([id, createdAt, hits, size]) => {
    const freq = typeof hits === 'number' ? [hits] : phraseHits(hits, folded)
    const D = varints(size)[0] ?? 0
    let score = 0
    for (let i = 0; i < freq.length; i++) score += idf[i] * ((freq[i] * (k1 + 1.0)) / (freq[i] + k1 * (1 - b + (b * D) / avgdl)))
    return { id, createdAt, rank: -1.0 * score }
  })
  scored.sort((x, y) => x.rank - y.rank || y.createdAt - x.createdAt || y.id - x.id)
  return scored.slice(0, limit).map((row) => row.id)
}

/** How long a search's answer (post ids, hashtags) is reused for the same words and limit, by default (`PLAZA_SEARCH_CACHE_TTL`, config.ts). */
export const SEARCH_CACHE_TTL_MS = 5_000
const SEARCH_CACHE_SIZE = 500

interface Cached<T> {
  at: number
  value: Promise<T>
}

/**
 * Recent search answers per database handle (that is, per server) and kind, least recently used
 * first. A popular query costs one search per TTL, and callers asking while it runs share it.
 * What is cached never depends on the caller: post ids (rows, counts and `user_liked` are read
 * for each caller) or hashtags with their counts (up to a TTL old).
 */
const searchCaches = new WeakMap<ReadDb, Map<string, Cached<unknown>>>()

/** `compute` must answer a real promise (a drizzle query is a thenable that runs again on every `then`). */
function cachedSearch<T>(db: ReadDb, key: string, now: number, ttlMs: number, compute: () => Promise<T>): Promise<T> {
  if (ttlMs <= 0) return compute()
  let cache = searchCaches.get(db)
  if (!cache) searchCaches.set(db, (cache = new Map()))
  const hit = cache.get(key)
  cache.delete(key)
  if (hit && now >= hit.at && now - hit.at < ttlMs) {
    cache.set(key, hit)
    return hit.value as Promise<T>
  }
  const value = compute()
  const entry = { at: now, value }
  cache.set(key, entry)
  // A failed search is not remembered.
  value.catch(() => cache.get(key) === entry && cache.delete(key))
  if (cache.size > SEARCH_CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return value
}

function cachedPostSearch(db: ReadDb, fts: string, limit: number, now: number, ttlMs: number): Promise<number[]> {
  return cachedSearch(db, `posts ${limit} ${fts}`, now, ttlMs, () => postSearchIds(db, fts, limit, now))
}

/**
 * User search, prepared (one statement for q with words, one for q without). On `scans`: its cost
 * grows with the users matched. Not cached, unlike posts and hashtags: a new or renamed account is
 * found (or not) by its name at once.
 */
export async function searchUsers(scans: ReadDb, q: string, viewerId: number | null, limit: number): Promise<{ users: UserSummary[] }> {
  const lower = q.toLowerCase()
  const fts = toFtsQuery(q)
  const params = { lower, end: prefixEnd(lower), viewer: viewerId ?? 0, limit }
  const rows = await (fts === null ? usersByPrefix(scans).all(params) : usersByPrefixOrWords(scans).all({ ...params, fts }))
  return { users: await withMedia(scans, rows.map(toUserSummary)) }
}

/**
 * Post search for `viewerId` at `now` (the clock, for the cache's TTL): the ids from the cache (or
 * one computation on `scans` that concurrent callers share), then this caller's rows, looked up
 * inline on `reads`. A cache hit never waits for a worker.
 */
export async function searchPosts(
  dbs: { reads: ReadDb; scans: ReadDb },
  q: string,
  viewerId: number | null,
  limit: number,
  now: Date,
  cacheTtlMs = SEARCH_CACHE_TTL_MS,
): Promise<{ posts: Post[] }> {
  const fts = toFtsQuery(q)
  if (!fts) return { posts: [] }
  const ids = await cachedPostSearch(dbs.scans, fts, limit, now.getTime(), cacheTtlMs)
  if (ids.length === 0) return { posts: [] }
  return { posts: await postsWithMedia(dbs.reads, await postPage(publicPostsByIds(dbs.reads), ids, viewerId ?? 0)) }
}

/** Hashtags starting with q, with their counts (up to SEARCH_CACHE_TTL_MS old); scans, as its cost grows with the tags sharing the prefix. */
export async function searchHashtags(scans: ReadDb, q: string, limit: number, now: Date, cacheTtlMs = SEARCH_CACHE_TTL_MS): Promise<{ hashtags: Array<{ tag: string; posts_count: number }> }> {
  if (q.replace(/^#+/, '') === '') return { hashtags: [] }
  return { hashtags: await cachedSearch(scans, `hashtags ${limit} ${q.toLowerCase()}`, now.getTime(), cacheTtlMs, async () => await hashtagSearchQuery(scans, q, limit)) }
}

/** The three searches at once: posts and hashtags from their caches when they can (a hit never waits for a worker), users on the workers. */
export async function searchAll(dbs: { reads: ReadDb; scans: ReadDb }, q: string, viewerId: number | null, limit: number, now: Date, cacheTtlMs = SEARCH_CACHE_TTL_MS) {
  const [u, p, h] = await Promise.all([searchUsers(dbs.scans, q, viewerId, limit), searchPosts(dbs, q, viewerId, limit, now, cacheTtlMs), searchHashtags(dbs.scans, q, limit, now, cacheTtlMs)])
  return { users: u.users, posts: p.posts, hashtags: h.hashtags }
}
