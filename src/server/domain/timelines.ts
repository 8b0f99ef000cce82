/**
 * Home timelines, fanned out on write (the Mastodon / GoToSocial shape, in SQLite).
 *
 * The feed of user u is S(u): the posts of the users u follows and u's own, newest first
 * (created_at, then id). `timelines` holds, per user, the ids of S(u) that were fanned out, so a
 * feed page is one range of its primary key. Three rules keep it exact:
 *
 * - **Fan-out in the post's transaction.** A new post goes into its author's timeline and each
 *   follower's, unless the author is a *pulled* author (`timeline_pulled_authors`: more than
 *   PLAZA_FANOUT_MAX_FOLLOWERS followers when posting; once pulled, always pulled). A pulled
 *   author's posts are read from `posts` at feed time and merged (Twitter's hybrid): writing a
 *   post into 100k timelines would hold the write lock for seconds.
 * - **Follow backfills, unfollow prunes**, in the follow's transaction: the followee's newest
 *   posts enter the follower's timeline, and on unfollow all of the followee's posts (public or
 *   not) leave it. So a timeline only ever holds posts its owner may see.
 * - **Capped, with a floor.** Timelines are trimmed to about TIMELINE_CAP entries. A trimmed
 *   timeline records its floor (`timeline_floors`): every post of S(u) newer than the floor is in
 *   it, older ones may be missing. A page that reaches the floor (deep pages, or a timeline
 *   thinned by an unfollow) is answered by the direct query over follows and posts instead, so
 *   the answer is the same either way.
 */
import { and, desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { DEFAULTS } from '../config.js'
import type { ReadDb, Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { follows, posts, timelineFloors, timelinePulledAuthors, timelines } from '../db/schema.js'

/** Newest entries a timeline keeps (migration 0003's backfill uses the same number). */
export const TIMELINE_CAP = 800

/**
 * A fan-out trims about one recipient timeline in TRIM_EVERY (those with (user_id + post_id) a
 * multiple of it), so trimming costs a fraction of each insert and a timeline overshoots the cap
 * by about TRIM_EVERY entries between trims.
 */
const TRIM_EVERY = 32

export const DEFAULT_FANOUT_MAX_FOLLOWERS = DEFAULTS.fanoutMaxFollowers


/** Below every real time: the bound of a timeline without a floor. */
const NO_FLOOR = Number.MIN_SAFE_INTEGER

/**
 * Trims the timelines of the users `userIds` selects (a subquery of `uid`s) to the newest
 * TIMELINE_CAP entries: the floor rises to the time of the first entry past the cap, and every
 * entry at or below the floor goes (entries tied with it too: the floor is a time, so all of
 * that millisecond is then "may be missing").
 */
async function trim(tx: Tx, userIds: SQL): Promise<void> {
  await tx.run(sql`
    insert into ${timelineFloors} (user_id, created_at)
    select uid, cut from (
      select uid, (select t.created_at from ${timelines} t where t.user_id = uid
                   order by t.created_at desc, t.post_id desc limit 1 offset ${TIMELINE_CAP}) as cut
      from (${userIds})
    ) where cut is not null
    on conflict (user_id) do update set created_at = max(created_at, excluded.created_at)`)
  await tx.run(sql`
    delete from ${timelines} where user_id in (${userIds})
      and created_at <= (select f.created_at from ${timelineFloors} f where f.user_id = ${timelines.userId})`)
}

/**
 * Writes a new post into the timelines it belongs to (its author's, and its author's followers'
 * unless the author is pulled), in the post's own transaction. `followers` is the author's
 * followers_count, which the caller reads back with the posts counter. Lean raw statements only:
 * this is the write lock's hot path.
 */
export async function fanOutPost(tx: Tx, post: { id: number; userId: number; createdAt: number }, followers: number, maxFollowers: number): Promise<void> {
  const { id, userId, createdAt } = post
  const over = followers > maxFollowers
  if (over) await tx.run(sql`insert into ${timelinePulledAuthors} (user_id) values (${userId}) on conflict do nothing`)
  const pulled = over || (await tx.all(sql`select 1 from ${timelinePulledAuthors} where user_id = ${userId}`)).length > 0
  const recipients = fanOutRecipients(userId, pulled)
  await tx.run(sql`insert into ${timelines} (user_id, created_at, post_id) select uid, ${createdAt}, ${id} from (${recipients}) where true`)
  await trim(tx, sql`select uid from (${recipients}) where (uid + ${id}) % ${TRIM_EVERY} = 0`)
}

/**
 * The `uid`s whose timelines get a new post of `authorId`: the author, and its followers unless
 * pulled. The follower ids are one range of `follows_following_created_idx`, which covers them
 * (`follows` is WITHOUT ROWID, so its indexes carry the primary key).
 */
export function fanOutRecipients(authorId: number, pulled: boolean): SQL {
  return pulled
    ? sql`select ${authorId} as uid`
    : sql`select follower_id as uid from ${follows} where following_id = ${authorId} union all select ${authorId}`
}

/**
 * After `followerId` started following `followeeId` (same transaction): the followee's newest
 * posts above the follower's floor enter the timeline, at most TIMELINE_CAP of them; if the
 * followee has more, the floor rises to where they were cut. Nothing for a pulled followee: its
 * posts are read at feed time.
 */
export async function backfillTimeline(tx: Tx, followerId: number, followeeId: number): Promise<void> {
  const [pulled] = await tx.select().from(timelinePulledAuthors).where(eq(timelinePulledAuthors.userId, followeeId))
  if (pulled) return
  const [floorRow] = await tx.select({ at: timelineFloors.createdAt }).from(timelineFloors).where(eq(timelineFloors.userId, followerId))
  const floor = floorRow?.at ?? NO_FLOOR
  const newest = () =>
    tx
      .select({ createdAt: posts.createdAt, id: posts.id })
      .from(posts)
      .where(and(eq(posts.userId, followeeId), sql`${posts.createdAt} > ${floor}`))
      .orderBy(desc(posts.createdAt), desc(posts.id))
  await tx.run(sql`
    insert into ${timelines} (user_id, created_at, post_id)
    select ${followerId}, created_at, id from (${newest().limit(TIMELINE_CAP)}) where true
    on conflict do nothing`)
  const [cut] = await newest().limit(1).offset(TIMELINE_CAP)
  if (cut) {
    await tx
      .insert(timelineFloors)
      .values({ userId: followerId, createdAt: cut.createdAt })
      .onConflictDoUpdate({ target: timelineFloors.userId, set: { createdAt: sql`max(${timelineFloors.createdAt}, excluded.created_at)` } })
  }
  await trim(tx, sql`select ${followerId} as uid`)
}

/**
 * After `followerId` stopped following `followeeId` (same transaction): every post of the
 * followee leaves the follower's timeline, public or not. Only posts no older than the
 * timeline's oldest entry are looked up (an index range of `posts_user_created_idx`).
 */
export async function pruneTimeline(tx: Tx, followerId: number, followeeId: number): Promise<void> {
  await tx.run(pruneTimelineQuery(followerId, followeeId))
}

export function pruneTimelineQuery(followerId: number, followeeId: number) {
  return sql`
    delete from ${timelines} where ${timelines.userId} = ${followerId} and (${timelines.createdAt}, ${timelines.postId}) in (
      select p.created_at, p.id from ${posts} p where p.user_id = ${followeeId}
        and p.created_at >= (select min(t.created_at) from ${timelines} t where t.user_id = ${followerId}))`
}

/**
 * The newest `depth` posts of the feed of `viewerId` as (created_at, post_id): the timeline
 * (a trim deletes what lies at or below the floor in the same transaction) merged with the newest `depth` posts of each followed pulled author (UNION
 * removes a post that is in both, one a pulled author wrote before it became one). The CROSS
 * JOIN fixes the loop order: the few pulled authors, each checked in the follows primary key,
 * rather than every account the viewer follows checked against them.
 */
export function timelineIdsQuery(db: ReadDb, viewerId: number | Placeholder, depth: number | Placeholder) {
  const merged = sql`
    select created_at, post_id from (
      select created_at, post_id from ${timelines}
      where user_id = ${viewerId}
      order by created_at desc, post_id desc limit ${depth})
    union
    select created_at, post_id from (
      select p.created_at as created_at, p.id as post_id from ${timelinePulledAuthors} pa
      cross join ${follows} f on f.follower_id = ${viewerId} and f.following_id = pa.user_id
      join ${posts} p on p.id in (
        select p2.id from ${posts} p2 where p2.user_id = pa.user_id order by p2.created_at desc, p2.id desc limit ${depth}))
    order by created_at desc, post_id desc limit ${depth}`
  // Through the query builder, so every driver (the write client, the reader pool) maps the rows.
  return db
    .select({ createdAt: sql<number>`created_at`.mapWith(Number), postId: sql<number>`post_id`.mapWith(Number) })
    .from(sql`(${merged})`)
}

const timelineIds = prepared((db) => timelineIdsQuery(db, sql.placeholder('viewer'), sql.placeholder('depth')).prepare())

const floorOf = prepared((db) =>
  db.select({ at: timelineFloors.createdAt }).from(timelineFloors).where(eq(timelineFloors.userId, sql.placeholder('viewer'))).prepare(),
)

/**
 * The ids of the newest `depth` feed posts of `viewerId`, newest first; null when the timeline
 * cannot answer exactly (the page reaches below its floor) and the caller must use the direct
 * query. Two prepared queries: an index range of the timeline (merged with the pulled authors'
 * newest posts) and the floor's primary-key lookup.
 */
export async function timelineFeedIds(db: ReadDb, viewerId: number, depth: number): Promise<number[] | null> {
  const rows = await timelineIds(db).all({ viewer: viewerId, depth })
  // The floor is read after the ids (each read is its own snapshot): a floor only ever rises, so
  // one set by a trim in between can only make the check stricter, never accept a page it removed.
  const floorRow = await floorOf(db).get({ viewer: viewerId })
  // Complete above the floor: the answer is exact when all `depth` entries lie above it.
  if (floorRow && (rows.length < depth || rows[depth - 1].createdAt <= floorRow.at)) return null
  return rows.map((row) => row.postId)
}
