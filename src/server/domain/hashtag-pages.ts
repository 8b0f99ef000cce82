/**
 * A hashtag's page (GET /posts/hashtag/{tag}: its public posts, newest first) and the trending
 * hashtags (GET /search/trending). Both show only what anyone may see: public posts, by accounts
 * that are not private (a follower of a private account sees its public posts on a page, as in its
 * feed), with blocks and suspensions applied per viewer on pages.
 */
import { and, desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Post } from '../../shared/types.js'
import type { ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { hashtags, likes, postHashtags, posts, users } from '../db/schema.js'
import { listedPost } from './hashtags.js'
import { readerForPage } from './page-depth.js'
import { listedTo, pageOf, postColumns, postsWithMedia, viewerKey, type Paging, type Readers } from './posts.js'
import { notSuspended } from './relations.js'

type Param = number | Placeholder

/**
 * The posts of hashtag `tagId` that `viewer` may see in a list of public posts (posts.ts listedTo),
 * newest first (by id, which grows with time): `post_hashtags_hashtag_idx` (hashtag_id, post_id)
 * read backwards, each post and its author by primary key, tested before paging.
 */
export function hashtagPostsQuery(db: ReadDb, tagId: Param, viewer: Param, limit: Param, offset: Param) {
  return db
    .select(postColumns(viewer))
    .from(postHashtags)
    .innerJoin(posts, eq(posts.id, postHashtags.postId))
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, viewer)))
    .where(and(eq(postHashtags.hashtagId, tagId), listedTo(viewer)))
    .orderBy(desc(postHashtags.postId))
    .limit(limit)
    .offset(offset)
}

const tagByName = prepared((db) => db.select({ id: hashtags.id, postsCount: hashtags.postsCount }).from(hashtags).where(eq(hashtags.tag, sql.placeholder('tag'))).limit(1).prepare())
const tagPage = prepared((db) => hashtagPostsQuery(db, sql.placeholder('tag'), sql.placeholder('viewer'), sql.placeholder('limit'), sql.placeholder('offset')).prepare())

/**
 * A page of a hashtag's posts for `viewerId`, with the tag's `posts_count`. A tag no post uses (or
 * only posts the viewer may not see) answers an empty page with its count, as an unknown one does
 * (count 0): the answer does not tell whether a hidden post uses it.
 */
export async function getHashtagPage(dbs: Readers, viewerId: number | null, input: Paging & { tag: string }): Promise<{ tag: string; posts_count: number; posts: Post[]; page: number; has_more: boolean }> {
  const tag = await tagByName(dbs.reads).get({ tag: input.tag })
  const { page, limit } = input
  if (!tag) return { tag: input.tag, posts_count: 0, posts: [], page, has_more: false }
  const rows = await tagPage(readerForPage(dbs, input)).all({ tag: tag.id, viewer: viewerKey(viewerId), limit: limit + 1, offset: (page - 1) * limit })
  const { items, has_more } = pageOf(rows, input, (row) => row)
  return { tag: input.tag, posts_count: tag.postsCount, posts: await postsWithMedia(dbs.reads, items), page, has_more }
}

/** How many of the newest public posts of public accounts trends look at, at most: bounds the ranking whatever the table's size. */
export const TRENDING_WINDOW = 5000

/** How far back trends look (the window is the newer of this and TRENDING_WINDOW posts). */
export const TRENDING_MAX_AGE_MS = 7 * 24 * 3600 * 1000

/** How long a ranking is served before a request starts recomputing it (as explore's, by the injected clock). */
export const TRENDING_REFRESH_MS = 60_000

/** Fewer distinct accounts than this is a conversation, not a trend. */
export const TRENDING_MIN_AUTHORS = 2

/** The most tags a ranking keeps (the API's limit is at most 50). */
const TRENDING_KEEP = 50

/**
 * The weight of one account's use of a tag whose newest use by it is `last`: 1 just now, a quarter
 * a day later, a ninth after two days (1 / (1 + age in days)²). Plain arithmetic, as explore's
 * score: the libsql build has no pow() or exp().
 */
function decay(now: number, last: SQL): SQL {
  const ageDays = sql`((${now} - ${last}) / 86400000.0)`
  return sql`(1.0 / ((1 + ${ageDays}) * (1 + ${ageDays})))`
}

/**
 * The trending tags at `now`: of the newest TRENDING_WINDOW public posts of public accounts not
 * suspended, of the last TRENDING_MAX_AGE_MS (a range of `posts_public_created_idx`), each tag's
 * distinct authors, each weighted by how recent its newest post with the tag is (decay); ranked by
 * that sum, then by authors, then by id. An account posting a tag many times counts once, so a
 * tag trends when many accounts take it up, not when one repeats it.
 */
export function trendingQuery(db: ReadDb, now: Date) {
  const at = now.getTime()
  const ranked = sql`
    select hashtag_id, sum(${decay(at, sql`last`)}) as score, count(*) as authors from (
      select ph.hashtag_id as hashtag_id, r.user_id as user_id, max(r.created_at) as last from (
        select p.id as id, p.user_id as user_id, p.created_at as created_at from ${posts} p
        where p.is_public = 1 and p.created_at > ${at - TRENDING_MAX_AGE_MS} and ${listedPost} and ${notSuspended(sql`p.user_id`)}
        order by p.created_at desc limit ${TRENDING_WINDOW}
      ) r join ${postHashtags} ph on ph.post_id = r.id
      group by ph.hashtag_id, r.user_id
    ) group by hashtag_id having count(*) >= ${TRENDING_MIN_AUTHORS}
    order by score desc, authors desc, hashtag_id limit ${TRENDING_KEEP}`
  return db
    .select({ id: sql<number>`hashtag_id`.mapWith(Number), authors: sql<number>`authors`.mapWith(Number) })
    .from(sql`(${ranked})`)
}

interface Ranking {
  at: number
  tags: Array<{ id: number; authors: number }>
}

/** One ranking per database handle, that is per process and server (as explore's). */
const rankings = new WeakMap<ReadDb, { current?: Ranking; refreshing?: Promise<Ranking> }>()

/**
 * The current ranking, computed on `scans`: served as is while younger than TRENDING_REFRESH_MS by
 * the clock, and while stale the request that notices starts the recompute and is served the old
 * one (explore.ts's scheme: only a process's very first request waits, and no two compute at once;
 * a failed recompute keeps the old ranking for the next request to retry).
 */
async function trendingRanking(scans: ReadDb, now: Date): Promise<Ranking['tags']> {
  let state = rankings.get(scans)
  if (!state) rankings.set(scans, (state = {}))
  const at = now.getTime()
  const { current } = state
  if (current && at >= current.at && at - current.at < TRENDING_REFRESH_MS) return current.tags
  const owner = state
  const refreshing =
    owner.refreshing ??
    (owner.refreshing = trendingQuery(scans, now).then(
      (tags) => {
        owner.refreshing = undefined
        return (owner.current = { at, tags })
      },
      (error: unknown) => {
        owner.refreshing = undefined
        throw error
      },
    ))
  if (!current) return (await refreshing).tags
  refreshing.catch(() => {})
  return current.tags
}

/** The recompute in flight on `scans`, if any: lets tests wait for it instead of sleeping. */
export async function trendingRefreshed(scans: ReadDb): Promise<void> {
  await rankings.get(scans)?.refreshing
}

const tagsByIds = prepared((db) =>
  db
    .select({ id: hashtags.id, tag: hashtags.tag, postsCount: hashtags.postsCount })
    .from(hashtags)
    .where(sql`${hashtags.id} in (select value from json_each(${sql.placeholder('ids')}))`)
    .prepare(),
)

/**
 * The `limit` most trending hashtags: the shared ranking's first ones, their tag and `posts_count`
 * read now (one primary-key lookup each, in one statement); a tag whose every listed post went since
 * the ranking (count 0) is left out.
 */
export async function getTrending(dbs: Readers, now: Date, limit: number): Promise<{ hashtags: Array<{ tag: string; posts_count: number; recent_authors: number }> }> {
  const ranked = (await trendingRanking(dbs.scans, now)).slice(0, limit)
  if (ranked.length === 0) return { hashtags: [] }
  const rows = await tagsByIds(dbs.reads).all({ ids: JSON.stringify(ranked.map((tag) => tag.id)) })
  const byId = new Map(rows.map((row) => [row.id, row]))
  return {
    hashtags: ranked.flatMap(({ id, authors }) => {
      const row = byId.get(id)
      return row && row.postsCount > 0 ? [{ tag: row.tag, posts_count: row.postsCount, recent_authors: authors }] : []
    }),
  }
}
