import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm'
import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { Post, UserSummary } from '../../shared/types.js'
import type { ReadDb } from '../db/client.js'
import { posts, users } from '../db/schema.js'
import { hashtagSearchQuery, prefixEnd } from './hashtags.js'
import { selectPosts, toPost } from './posts.js'
import { toUserSummary, userSummaryColumns } from './users.js'

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

/** Users whose username starts with q, or whose name or username has words starting with q's words. */
export function userSearchQuery(db: ReadDb, q: string, viewerId: number | null, limit: number) {
  const lower = q.toLowerCase()
  const fts = toFtsQuery(q)
  const usernameLower = sql`lower(${users.username})`
  // Each source is bounded by the limit on its own index before the union is ranked.
  const byPrefix = sql`select id from (select ${users.id} as id from ${users} where ${usernameLower} >= ${lower} and ${usernameLower} < ${prefixEnd(lower)} order by ${usernameLower} limit ${limit})`
  const byWords = fts
    ? sql` union select id from (select rowid as id from ${usersFts} where ${usersFts} match ${fts} order by rank limit ${limit})`
    : sql``
  return db
    .select(userSummaryColumns(viewerId))
    .from(users)
    .where(inArray(users.id, sql`(${byPrefix}${byWords})`))
    .orderBy(
      desc(sql`${usernameLower} = ${lower}`),
      desc(sql`${usernameLower} >= ${lower} and ${usernameLower} < ${prefixEnd(lower)}`),
      desc(users.followersCount),
      asc(users.id),
    )
    .limit(limit)
}

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

/** How long a post search's ids are reused for the same words and limit. */
export const SEARCH_CACHE_TTL_MS = 5_000
const SEARCH_CACHE_SIZE = 500

interface CachedSearch {
  at: number
  ids: Promise<number[]>
}

/**
 * Recent post-search answers per database handle (that is, per server), least recently used
 * first: ids only, so rows, counts and `user_liked` are read for each caller. A popular query
 * costs one search per TTL, and callers asking while it runs share it.
 */
const searchCaches = new WeakMap<ReadDb, Map<string, CachedSearch>>()

function cachedPostSearch(db: ReadDb, fts: string, limit: number, now: number): Promise<number[]> {
  let cache = searchCaches.get(db)
  if (!cache) searchCaches.set(db, (cache = new Map()))
  const key = `${limit} ${fts}`
  const hit = cache.get(key)
  cache.delete(key)
  if (hit && now >= hit.at && now - hit.at < SEARCH_CACHE_TTL_MS) {
    cache.set(key, hit)
    return hit.ids
  }
  const ids = postSearchIdsQuery(db, fts, limit).then((rows) => rows.map((row) => row.id))
  const entry = { at: now, ids }
  cache.set(key, entry)
  // A failed search is not remembered.
  ids.catch(() => cache.get(key) === entry && cache.delete(key))
  if (cache.size > SEARCH_CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return ids
}

export async function searchUsers(db: ReadDb, q: string, viewerId: number | null, limit: number): Promise<{ users: UserSummary[] }> {
  const rows = await userSearchQuery(db, q, viewerId, limit)
  return { users: rows.map(toUserSummary) }
}

/** Post search for `viewerId` at `now` (the clock, for the cache's TTL): cached ids, then this caller's rows. */
export async function searchPosts(db: ReadDb, q: string, viewerId: number | null, limit: number, now: Date): Promise<{ posts: Post[] }> {
  const fts = toFtsQuery(q)
  if (!fts) return { posts: [] }
  const ids = await cachedPostSearch(db, fts, limit, now.getTime())
  if (ids.length === 0) return { posts: [] }
  const rows = await selectPosts(db, viewerId).where(and(inArray(posts.id, ids), eq(posts.isPublic, true)))
  const byId = new Map(rows.map((row) => [row.id, row]))
  return { posts: ids.flatMap((id) => (byId.has(id) ? [toPost(byId.get(id)!)] : [])) }
}

export async function searchHashtags(db: ReadDb, q: string, limit: number): Promise<{ hashtags: Array<{ tag: string; posts_count: number }> }> {
  if (q.replace(/^#+/, '') === '') return { hashtags: [] }
  return { hashtags: await hashtagSearchQuery(db, q, limit) }
}

export async function searchAll(db: ReadDb, q: string, viewerId: number | null, limit: number, now: Date) {
  const [u, p, h] = await Promise.all([searchUsers(db, q, viewerId, limit), searchPosts(db, q, viewerId, limit, now), searchHashtags(db, q, limit)])
  return { users: u.users, posts: p.posts, hashtags: h.hashtags }
}
