/**
 * Explore: one ranking shared by every request of a process, recomputed off the request path.
 * Ranking the window costs the same for every caller (it does not depend on who asks), so it is
 * computed at most once per EXPLORE_REFRESH_MS, on the `scans` workers, and kept as an ordered id
 * list; a page joins its slice of ids to the rows (a prepared query on `reads`), with
 * `user_liked` for the caller.
 */
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { ReadDb } from '../db/client.js'
import { posts } from '../db/schema.js'
import { prepared } from '../db/prepared.js'
import { authorNotPrivate, postPage, postsWithMedia, publicPostsByIds, type Paging, type Readers } from './posts.js'

/** How many of the newest public posts explore ranks: bounds the ranking's work whatever the table size. */
export const EXPLORE_WINDOW = 1000

/** How long a ranking is served before a request starts recomputing it. */
export const EXPLORE_REFRESH_MS = 30_000

/**
 * Explore score, Hacker-News style with gravity 2: (likes + 2·comments + 1) / (age_hours + 2)².
 * Plain arithmetic, so it runs on any SQLite build (libsql has no pow()).
 */
export function exploreScore(now: Date): SQL<number> {
  const ageHours = sql`((${now.getTime()} - ${posts.createdAt}) / 3600000.0)`
  return sql<number>`((${posts.likesCount} + 2 * ${posts.commentsCount} + 1) / ((${ageHours} + 2) * (${ageHours} + 2)))`
}

/**
 * The ids of the newest EXPLORE_WINDOW public posts of accounts that are not private
 * (`posts_public_created_idx`, a users primary-key probe each), best score first, ties newest first.
 * Explore is for finding accounts: a private account's posts are not in it, not even for its
 * followers (they have them in their feed).
 */
export function exploreRankingQuery(db: ReadDb, now: Date) {
  const window = db
    .select({ id: posts.id })
    .from(posts)
    .where(and(eq(posts.isPublic, true), authorNotPrivate(false)))
    .orderBy(desc(posts.createdAt))
    .limit(EXPLORE_WINDOW)
  return db
    .select({ id: posts.id })
    .from(posts)
    .where(inArray(posts.id, window))
    .orderBy(desc(exploreScore(now)), desc(posts.createdAt), desc(posts.id))
}

interface Ranking {
  /** The clock's time the scores were computed for. */
  at: number
  ids: number[]
}

interface RankingState {
  current?: Ranking
  refreshing?: Promise<Ranking>
}

/** One ranking per database handle, that is per process and server (tests run several servers in one process). */
const rankings = new WeakMap<ReadDb, RankingState>()

function stateOf(db: ReadDb): RankingState {
  let state = rankings.get(db)
  if (!state) rankings.set(db, (state = {}))
  return state
}

/** Computes the ranking for `now` on `db` and makes it current; at most one at a time per database. */
function refresh(db: ReadDb, state: RankingState, now: Date): Promise<Ranking> {
  const at = now.getTime()
  const refreshing = exploreRankingQuery(db, now).then(
    (rows) => {
      state.refreshing = undefined
      return (state.current = { at, ids: rows.map((row) => row.id) })
    },
    (error: unknown) => {
      state.refreshing = undefined
      throw error
    },
  )
  state.refreshing = refreshing
  return refreshing
}

/**
 * The current ranking, computed on `db` (the `scans` workers). A fresh one (computed less than
 * EXPLORE_REFRESH_MS ago by the clock) is served as is. A stale one is served too, while the
 * request that notices starts the recompute in the background: only the very first request of a
 * process waits for a ranking, and no two compute at once. A failed recompute leaves the old
 * ranking and is tried again by the next request. The clock is the injected one, so tests move
 * time instead of sleeping.
 */
export async function exploreRanking(db: ReadDb, now: Date): Promise<number[]> {
  const state = stateOf(db)
  const at = now.getTime()
  const { current } = state
  if (current && at >= current.at && at - current.at < EXPLORE_REFRESH_MS) return current.ids
  const refreshing = state.refreshing ?? refresh(db, state, now)
  if (!current) return (await refreshing).ids
  refreshing.catch(() => {})
  return current.ids
}

/** The recompute in flight on `db`, if any: lets tests wait for it instead of sleeping. */
export async function exploreRefreshed(db: ReadDb): Promise<void> {
  await rankings.get(db)?.refreshing
}

/**
 * A page of explore for `viewerId`: the page's slice of the ranking joined to the rows (counts
 * and `user_liked` are read now). The join keeps only public posts by authors the viewer may see,
 * so a post made non-public or deleted since the ranking was computed, or hidden from this viewer
 * by a block or a suspension, is dropped from its page, never shown; positions stay fixed, so
 * pages neither overlap nor skip.
 */
export async function getExplore(dbs: Readers, viewerId: number | null, now: Date, { page, limit }: Paging) {
  const ids = await exploreRanking(dbs.scans, now)
  const slice = ids.slice((page - 1) * limit, page * limit)
  const rows = await postPage(publicPostsByIds(dbs.reads), slice, viewerId ?? 0)
  return { posts: await postsWithMedia(dbs.reads, rows), page, has_more: ids.length > page * limit }
}
