import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm'
import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { Post, UserSummary } from '../../shared/types.js'
import type { Db } from '../db/client.js'
import { likes, posts, users } from '../db/schema.js'
import { hashtagSearchQuery, prefixEnd } from './hashtags.js'
import { postColumns, toPost } from './posts.js'
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
export function userSearchQuery(db: Db, q: string, viewerId: number | null, limit: number) {
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

/** Public posts matching q's words, best match (bm25) first, then newest. Non-public posts are never indexed. */
export function postSearchQuery(db: Db, fts: string, viewerId: number | null, limit: number) {
  return db
    .select(postColumns())
    .from(postsFts)
    .innerJoin(posts, eq(posts.id, postsFts.rowid))
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, viewerId ?? 0)))
    .where(and(sql`${postsFts} match ${fts}`, eq(posts.isPublic, true)))
    .orderBy(asc(postsFts.rank), desc(posts.createdAt), desc(posts.id))
    .limit(limit)
}

export async function searchUsers(db: Db, q: string, viewerId: number | null, limit: number): Promise<{ users: UserSummary[] }> {
  const rows = await userSearchQuery(db, q, viewerId, limit)
  return { users: rows.map(toUserSummary) }
}

export async function searchPosts(db: Db, q: string, viewerId: number | null, limit: number): Promise<{ posts: Post[] }> {
  const fts = toFtsQuery(q)
  if (!fts) return { posts: [] }
  return { posts: (await postSearchQuery(db, fts, viewerId, limit)).map(toPost) }
}

export async function searchHashtags(db: Db, q: string, limit: number): Promise<{ hashtags: Array<{ tag: string; posts_count: number }> }> {
  if (q.replace(/^#+/, '') === '') return { hashtags: [] }
  return { hashtags: await hashtagSearchQuery(db, q, limit) }
}

export async function searchAll(db: Db, q: string, viewerId: number | null, limit: number) {
  const [u, p, h] = await Promise.all([searchUsers(db, q, viewerId, limit), searchPosts(db, q, viewerId, limit), searchHashtags(db, q, limit)])
  return { users: u.users, posts: p.posts, hashtags: h.hashtags }
}
