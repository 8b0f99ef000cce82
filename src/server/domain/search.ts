import { and, asc, desc, inArray, sql, type Placeholder } from 'drizzle-orm'
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
 * Users whose username starts with `lower` (below `end`, its prefixEnd), or whose name or username
 * has words matching `fts` (when there is one); values or placeholders.
 */
function userSearchSelect(db: ReadDb, p: { lower: Param; end: Param; fts: Param | null; viewer: number | Placeholder | null; limit: number | Placeholder }) {
  const usernameLower = sql`lower(${users.username})`
  // Each source is bounded by the limit on its own index before the union is ranked.
  const byPrefix = sql`select id from (select ${users.id} as id from ${users} where ${usernameLower} >= ${p.lower} and ${usernameLower} < ${p.end} order by ${usernameLower} limit ${p.limit})`
  const byWords =
    p.fts !== null ? sql` union select id from (select rowid as id from ${usersFts} where ${usersFts} match ${p.fts} order by rank limit ${p.limit})` : sql``
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
export const SEARCH_WINDOW = 1000

/**
 * The ids of public posts matching q's words: of the newest SEARCH_WINDOW matches, best match
 * (bm25) first, then newest. Non-public posts are never indexed; the `is_public` test repeats the
 * rule at the join. The work is bounded by construction (no progress handler is reachable
 * through drizzle): at most SEARCH_WINDOW rows are scored, looked up and sorted. The CROSS JOIN
 * keeps the matches as the outer loop (else, without statistics, SQLite may walk every public
 * post and probe the matches).
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

/** How long a search's answer (post ids, hashtags) is reused for the same words and limit. */
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
function cachedSearch<T>(db: ReadDb, key: string, now: number, compute: () => Promise<T>): Promise<T> {
  let cache = searchCaches.get(db)
  if (!cache) searchCaches.set(db, (cache = new Map()))
  const hit = cache.get(key)
  cache.delete(key)
  if (hit && now >= hit.at && now - hit.at < SEARCH_CACHE_TTL_MS) {
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

function cachedPostSearch(db: ReadDb, fts: string, limit: number, now: number): Promise<number[]> {
  return cachedSearch(db, `posts ${limit} ${fts}`, now, () => postSearchIdsQuery(db, fts, limit).then((rows) => rows.map((row) => row.id)))
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
): Promise<{ posts: Post[] }> {
  const fts = toFtsQuery(q)
  if (!fts) return { posts: [] }
  const ids = await cachedPostSearch(dbs.scans, fts, limit, now.getTime())
  if (ids.length === 0) return { posts: [] }
  return { posts: await postsWithMedia(dbs.reads, await postPage(publicPostsByIds(dbs.reads), ids, viewerId ?? 0)) }
}

/** Hashtags starting with q, with their counts (up to SEARCH_CACHE_TTL_MS old); scans, as its cost grows with the tags sharing the prefix. */
export async function searchHashtags(scans: ReadDb, q: string, limit: number, now: Date): Promise<{ hashtags: Array<{ tag: string; posts_count: number }> }> {
  if (q.replace(/^#+/, '') === '') return { hashtags: [] }
  return { hashtags: await cachedSearch(scans, `hashtags ${limit} ${q.toLowerCase()}`, now.getTime(), async () => await hashtagSearchQuery(scans, q, limit)) }
}

/** The three searches at once: posts and hashtags from their caches when they can (a hit never waits for a worker), users on the workers. */
export async function searchAll(dbs: { reads: ReadDb; scans: ReadDb }, q: string, viewerId: number | null, limit: number, now: Date) {
  const [u, p, h] = await Promise.all([searchUsers(dbs.scans, q, viewerId, limit), searchPosts(dbs, q, viewerId, limit, now), searchHashtags(dbs.scans, q, limit, now)])
  return { users: u.users, posts: p.posts, hashtags: h.hashtags }
}
