/**
 * Home timelines, fanned out on write (the Mastodon / GoToSocial shape, in SQLite).
 *
 * The feed of user u is S(u): the posts of the users u follows and u's own, newest first
 * (created_at, then id). `timelines` holds, per user, the ids of S(u) that were fanned out, so a
 * feed page is one range of its primary key. Four rules keep it exact:
 *
 * - **Fan-out after the post, in order.** A new post is stored alone; a background runner
 *   (fanout.ts) then writes it into its author's timeline and each follower's, in post id order,
 *   and records how far it got (`timeline_fanout`). Posts past that cursor are *pending*: the feed
 *   reads the viewer's and followees' pending posts from `posts` and merges them, so a post is in
 *   every follower's feed from its commit on. The fan-out reads the follows as they are when it
 *   runs, so a post never enters the timeline of someone who unfollowed meanwhile.
 * - **Pulled authors.** An author with more than PLAZA_FANOUT_MAX_FOLLOWERS followers when its
 *   post is fanned out becomes *pulled* (`timeline_pulled_authors`; once pulled, always pulled):
 *   its posts go into its own timeline only and are read from `posts` at feed time and merged
 *   (Twitter's hybrid): writing a post into 100k timelines would hold the write lock for seconds.
 * - **Follow backfills, unfollow prunes.** A follow's transaction records the pair as a pending
 *   backfill (`timeline_backfills`); the runner (fanout.ts) later writes the followee's newest
 *   posts (pending ones too, which is why the fan-out skips a post already there) into the
 *   follower's timeline, if the follow still stands, and drops the pair in the same transaction.
 *   Until then the feed reads those followees' newest posts from `posts` and merges them, as for
 *   pulled authors. An unfollow drops the pair and all of the followee's posts (public or not)
 *   leave the timeline, in its transaction. So a timeline only ever holds posts its owner may see.
 * - **Capped, with a floor.** Timelines are trimmed to about TIMELINE_CAP entries. A trimmed
 *   timeline records its floor (`timeline_floors`): every post of S(u) newer than the floor is in
 *   it, pending, or by a pulled author; older ones may be missing. A page that reaches the floor
 *   (deep pages, or a timeline thinned by an unfollow) is answered by the direct query over
 *   follows and posts instead, so the answer is the same either way.
 */
import { sql, type Placeholder, type SQL } from 'drizzle-orm'
import { DEFAULTS } from '../config.js'
import type { ReadDb, Tx } from '../db/client.js'
import { leanStatement, prepared } from '../db/prepared.js'
import { pagesQuery } from '../db/warm.js'
import { follows, mutes, posts, timelineBackfills, timelineFanout, timelineFloors, timelinePulledAuthors, timelines, users } from '../db/schema.js'
import { notSuspended } from './relations.js'

/**
 * Newest entries a timeline keeps, as Mastodon's home feeds (400). Migration 0003's backfill kept
 * 800 (this cap until 2026-11-24); the trims bring such timelines down as posts arrive. Halving it
 * halved the timelines table (1.46 GB of the 1M-post network's 3.2 GB), which is what a post's
 * fan-out writes into at random: more of the database stays in the page cache.
 */
export const TIMELINE_CAP = 400

/**
 * A fan-out trims about one recipient timeline in TRIM_EVERY (those with (user_id + post_id) a
 * multiple of it), so trimming costs a fraction of each insert and a timeline overshoots the cap
 * by about TRIM_EVERY entries between trims. A backfill trims by the same measure (trimDue).
 */
export const TRIM_EVERY = 32

/**
 * Whether a backfill that added `added` entries to a timeline trims it: always from TRIM_EVERY
 * entries on, and otherwise with odds added / TRIM_EVERY (by `key`, the pair's ids summed, fixed
 * per pair as the fan-out's is per post), so a timeline overshoots the cap by about TRIM_EVERY
 * entries, as under the fan-out's trims. A trim's two statements took about 60 µs under the write
 * lock on the 1M-post network (follow rounds, 2026-11-27), and ran on four backfills in five there
 * when every backfill that added anything trimmed (mostly a handful of posts each).
 */
export function trimDue(key: number, added: number): boolean {
  return added >= TRIM_EVERY || key % TRIM_EVERY < added
}

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
  await tx.run(trimFloor(userIds))
  await tx.run(trimBelowFloor(userIds))
}

/** `trim` of one user's timeline, its two statements rendered once (leanStatement): a follow's backfill runs it under the write lock. */
async function trimOne(tx: Tx, userId: number): Promise<void> {
  await tx.run(trimOneFloor({ user: userId }))
  await tx.run(trimOneBelowFloor({ user: userId }))
}

const trimOneFloor = leanStatement(['user'], (v) => trimFloor(sql`select ${v.user} as uid`))
const trimOneBelowFloor = leanStatement(['user'], (v) => trimBelowFloor(sql`select ${v.user} as uid`))

/** Raises the floors of the timelines `userIds` selects to their first entry past the cap. */
function trimFloor(userIds: SQL): SQL {
  return sql`
    insert into ${timelineFloors} (user_id, created_at)
    select uid, cut from (
      select uid, (select t.created_at from ${timelines} t where t.user_id = uid
                   order by t.created_at desc, t.post_id desc limit 1 offset ${TIMELINE_CAP}) as cut
      from (${userIds})
    ) where cut is not null
    on conflict (user_id) do update set created_at = max(created_at, excluded.created_at)`
}

/**
 * Deletes the entries at or below their floor of the timelines `userIds` selects, each timeline's
 * as one range of its primary key (a correlated floor lookup in the WHERE would be evaluated for
 * every entry of the timeline).
 */
function trimBelowFloor(userIds: SQL): SQL {
  return sql`
    delete from ${timelines} where (user_id, created_at) in (
      select t.user_id, t.created_at from (${userIds}) u
      join ${timelineFloors} f on f.user_id = u.uid
      join ${timelines} t on t.user_id = u.uid and t.created_at <= f.created_at)`
}

/**
 * Writes a pending post into the timelines it belongs to (its author's, and its author's current
 * followers' unless the author is pulled), in the fan-out runner's transaction (fanout.ts).
 * `followers` is the author's followers_count now. A follow made since the post was stored may
 * have backfilled it already, hence `on conflict do nothing`. Lean raw statements only: this is
 * the write lock's hot path.
 */
export async function fanOutPost(tx: Tx, post: { id: number; userId: number; createdAt: number }, followers: number, maxFollowers: number): Promise<void> {
  const { id, userId, createdAt } = post
  const over = followers > maxFollowers
  if (over) await tx.run(sql`insert into ${timelinePulledAuthors} (user_id) values (${userId}) on conflict do nothing`)
  const pulled = over || (await tx.all(sql`select 1 from ${timelinePulledAuthors} where user_id = ${userId}`)).length > 0
  const recipients = fanOutRecipients(userId, pulled)
  await tx.run(sql`insert into ${timelines} (user_id, created_at, post_id) select uid, ${createdAt}, ${id} from (${recipients}) where true on conflict do nothing`)
  await trim(tx, sql`select uid from (${recipients}) where (uid + ${id}) % ${TRIM_EVERY} = 0`)
}

/**
 * The `uid`s whose timelines get a new post of `authorId`: the author, and its followers unless
 * pulled. The follower ids are one range of `follows_following_created_idx`, which covers them
 * (`follows` is WITHOUT ROWID, so its indexes carry the primary key).
 */
export function fanOutRecipients(authorId: number, pulled: boolean): SQL {
  // Followers who muted the author are skipped: the set of them is read once (mutes_muted_idx), not probed per follower.
  return pulled
    ? sql`select ${authorId} as uid`
    : sql`select follower_id as uid from ${follows} where following_id = ${authorId}
        and follower_id not in (select muter_id from ${mutes} where muted_id = ${authorId})
      union all select ${authorId}`
}

/**
 * Records, in a follow's transaction, that the follower's timeline is owed the followee's posts:
 * the runner backfills it (backfillPending), and the feed merges the followee's newest posts
 * until it has. A backfill reads up to TIMELINE_CAP + 1 posts and writes as many timeline rows,
 * at random places of a large b-tree (about 140 µs of a follow's 470 under the write lock on the
 * 1M-post network); the pair is one row of a small table.
 */
export const queueBackfill = leanStatement(
  ['follower', 'followee'],
  (v) => sql`insert into ${timelineBackfills} (follower_id, followee_id) values (${v.follower}, ${v.followee}) on conflict do nothing`,
)

/** Drops a pending backfill (an unfollow's transaction): nothing is owed any more. */
export const dropBackfill = leanStatement(
  ['follower', 'followee'],
  (v) => sql`delete from ${timelineBackfills} where follower_id = ${v.follower} and followee_id = ${v.followee}`,
)

/** Pending backfills a runner's slice takes at most (each is about TIMELINE_CAP rows' work at most). */
const BACKFILL_BATCH = 16

/**
 * Runs pending backfills (the runner's transaction, fanout.ts) in key order (follower, followee),
 * until `more()` says the slice is spent (at least one): each one whose follow still stands is
 * backfilled as the follow's transaction once did, and every one taken is dropped. Resolves to
 * whether any is left. Key order, not the order the follows came in: under a steady stream of
 * follows a pair may wait behind newer ones, which costs its follower's feed one more merged index
 * range meanwhile (timelineIdsQuery), never an answer. The followee's posts_count comes with the
 * pair (exact in this transaction, as every counter), so backfillTimeline can skip what it would
 * find empty.
 */
export async function backfillPending(tx: Tx, more: () => boolean): Promise<boolean> {
  const pairs = await tx.values<[number, number, number, number]>(sql`
    select b.follower_id, b.followee_id,
      exists (select 1 from ${follows} f where f.follower_id = b.follower_id and f.following_id = b.followee_id),
      (select u.posts_count from ${users} u where u.id = b.followee_id)
    from ${timelineBackfills} b limit ${BACKFILL_BATCH + 1}`)
  let done = 0
  // Rows are read by index (on the write client they are array-like, not iterable).
  for (const pair of pairs.slice(0, BACKFILL_BATCH)) {
    if (done > 0 && !more()) break
    const follower = pair[0]
    const followee = pair[1]
    if (pair[2]) await backfillTimeline(tx, follower, followee, pair[3])
    await tx.run(dropBackfill({ follower, followee }))
    done++
  }
  return pairs.length > done
}

/** The pending backfills of a runner's next slice, read without the write lock so their pages can be warmed first. */
export const nextBackfills: SQL = sql`select follower_id, followee_id from ${timelineBackfills} limit ${BACKFILL_BATCH}`

/**
 * Backfills `followerId`'s timeline with `followeeId`'s posts (the runner's transaction, or an
 * unmute's): the followee's newest posts above the follower's floor enter the timeline, at most
 * TIMELINE_CAP of them; if the followee has more, the floor rises to where they were cut. Nothing
 * for a pulled followee (its posts are read at feed time) nor a muted one (an unmute backfills).
 * Lean raw statements, as everything under the write lock: the pulled check and the floor are
 * subqueries of the insert, and the timeline is trimmed when trimDue says, by how much it grew.
 *
 * `followeePosts`, the followee's posts_count when the caller has it (the runner reads it with the
 * pair), spares the statements that could find nothing: with no posts there is nothing to copy,
 * and with TIMELINE_CAP or fewer no post lies past the cap, so the floor stays. On the 1M-post
 * network (ten posts an account on average) that is most backfills: the floor's statement took
 * about 37 µs of each under the write lock, and the insert about 80.
 */
export async function backfillTimeline(tx: Tx, followerId: number, followeeId: number, followeePosts?: number): Promise<void> {
  if (followeePosts === 0) return
  const pair = { follower: followerId, followee: followeeId }
  const inserted = await tx.run(backfillInsert(pair))
  if (followeePosts === undefined || followeePosts > TIMELINE_CAP) await tx.run(backfillFloor(pair))
  if (trimDue(followerId + followeeId, inserted.rowsAffected)) await trimOne(tx, followerId)
}

/** The followee's posts above the follower's floor, newest first (unless the followee is pulled or muted). */
function followeeNewest(follower: Placeholder, followee: Placeholder): SQL {
  const floor = sql`coalesce((select created_at from ${timelineFloors} where user_id = ${follower}), ${NO_FLOOR})`
  return sql`
    select created_at, id from ${posts}
    where user_id = ${followee} and created_at > ${floor}
      and not exists (select 1 from ${timelinePulledAuthors} where user_id = ${followee})
      and not exists (select 1 from ${mutes} where muter_id = ${follower} and muted_id = ${followee})
    order by created_at desc, id desc`
}

const backfillInsert = leanStatement(
  ['follower', 'followee'],
  (v) => sql`
    insert into ${timelines} (user_id, created_at, post_id)
    select ${v.follower}, created_at, id from (${followeeNewest(v.follower, v.followee)} limit ${TIMELINE_CAP}) where true
    on conflict do nothing`,
)

/** The followee's first post past the cap, if any: the timeline is complete only above it. */
const backfillFloor = leanStatement(
  ['follower', 'followee'],
  (v) => sql`
    insert into ${timelineFloors} (user_id, created_at)
    select ${v.follower}, created_at from (${followeeNewest(v.follower, v.followee)} limit 1 offset ${TIMELINE_CAP}) where true
    on conflict (user_id) do update set created_at = max(created_at, excluded.created_at)`,
)

/**
 * What a follow's backfill or an unfollow's prune reads and writes, as lookups for a warming read
 * (db/warm.ts): the follower's timeline (every leaf of it: the followee's posts go in or leave
 * from among its entries, and a trim counts them) and floor, and the followee's newest posts in
 * posts_user_created_idx.
 */
export function followTimelinePages(followerId: Placeholder, followeeId: Placeholder): SQL[] {
  return [
    sql`select count(*) from ${timelines} where user_id = ${followerId}`,
    sql`select created_at from ${timelineFloors} where user_id = ${followerId}`,
    sql`select count(*) from (select 1 from ${posts} indexed by posts_user_created_idx where user_id = ${followeeId} order by created_at desc limit ${TIMELINE_CAP + 1})`,
  ]
}

/** `followTimelinePages` as a warming read (db/warm.ts) for the runner's backfills (fanout.ts). */
export const backfillPages = pagesQuery(['follower', 'followee'], ({ follower, followee }) => followTimelinePages(follower, followee))

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
 * Whether a followed author's posts stay out of `viewer`'s feed at read time: muted by the viewer
 * or suspended. Both are sets read once per statement (the viewer's mutes, a range of their
 * primary key; the suspended accounts, users_suspended_idx), not probed per row. A block needs no
 * test here: it removed the follow.
 */
function hiddenFromFeed(viewer: number | Placeholder, author: SQL): SQL {
  return sql`${author} not in (select muted_id from ${mutes} where muter_id = ${viewer}) and ${notSuspended(author)}`
}

/**
 * The timeline entry's post is not by a suspended account. Timelines hold post ids only, so this
 * reads the post's author (a primary-key probe), but only while some account is suspended: the
 * first test is a subquery of no row value, evaluated once per statement.
 */
function noSuspendedAuthor(postId: SQL): SQL {
  return sql`(not exists (select 1 from ${users} where suspended_at is not null)
    or exists (select 1 from ${posts} sp where sp.id = ${postId} and ${notSuspended(sql`sp.user_id`)}))`
}

/** The fan-out cursor (fanout.ts): every post with an id at or below it is in its timelines. */
const fanoutCursor = sql`(select c.post_id from ${timelineFanout} c where c.id = 1)`

/**
 * The time of the `depth`-th newest timeline entry of `viewerId` (below every time when the
 * timeline holds fewer): a post older than it cannot enter the feed's newest `depth`, since that
 * many newer ones are already there. It bounds the pulled and pending merges.
 */
function pageBound(viewerId: number | Placeholder, depth: number | Placeholder): SQL {
  return sql`coalesce((select t.created_at from ${timelines} t where t.user_id = ${viewerId}
    order by t.created_at desc, t.post_id desc limit 1 offset ${depth} - 1), ${NO_FLOOR})`
}

/**
 * Up to this many pending posts (by id span), the pending merge reads them all and keeps the
 * viewer's and its followees' (a rowid range, a follows primary-key lookup each); past it, it reads
 * each followee's newest instead (an index range each). The two cost about the same at a backlog
 * of about the viewer's follows count; a steady trickle of posts leaves a backlog of a few.
 */
const FEW_PENDING = 128

/**
 * The pending posts (past the fan-out cursor) of `viewerId` and of the accounts it follows, as
 * (created_at, post_id), non-public ones included as the timeline would hold them; only those at
 * or above the page bound. Its cost is bounded by the smaller of the backlog (up to FEW_PENDING)
 * and the viewer's follows: a few pending posts are read from the posts b-tree's tail; a longer
 * backlog through one range of `posts_user_created_idx` (which holds the id) per author, the CROSS
 * JOIN fixing that loop order. Nothing is read while nothing is pending, the normal state: the
 * cursor is then the newest post id, and `max(id)` is the last entry of the posts b-tree. Each arm
 * is switched on by its LIMIT (-1: none, 0: skipped), which SQLite evaluates once before the
 * loops; a constant WHERE term with a subquery in it would be evaluated per row.
 */
export function pendingIdsQuery(viewerId: number | Placeholder, depth: number | Placeholder): SQL {
  const bound = pageBound(viewerId, depth)
  const span = sql`((select max(m.id) from ${posts} m) - ${fanoutCursor})`
  return sql`
    select created_at, post_id from (
      select p.created_at as created_at, p.id as post_id from ${posts} p
      where p.id > ${fanoutCursor} and p.created_at >= ${bound}
        and (p.user_id = ${viewerId} or (exists (select 1 from ${follows} f where f.follower_id = ${viewerId} and f.following_id = p.user_id)
          and ${hiddenFromFeed(viewerId, sql`p.user_id`)}))
      limit case when ${span} between 1 and ${FEW_PENDING} then -1 else 0 end)
    union all
    select created_at, post_id from (
      select p.created_at as created_at, p.id as post_id from (
        select f.following_id as uid from ${follows} f where f.follower_id = ${viewerId} and ${hiddenFromFeed(viewerId, sql`f.following_id`)}
        union all select ${viewerId}) a
      cross join ${posts} p on p.user_id = a.uid and p.created_at >= ${bound} and p.id > ${fanoutCursor}
      limit case when ${span} > ${FEW_PENDING} then -1 else 0 end)`
}

/**
 * The ids of the newest `depth` posts of `author` from the page bound up: one range of
 * posts_user_created_idx, read as `alias` (each merge names its own, as query plans show them).
 */
function authorNewest(author: SQL, alias: 'p2' | 'p3', viewerId: number | Placeholder, depth: number | Placeholder): SQL {
  const a = sql.raw(alias)
  return sql`select ${a}.id from ${posts} ${a} where ${a}.user_id = ${author} and ${a}.created_at >= ${pageBound(viewerId, depth)}
        order by ${a}.created_at desc, ${a}.id desc limit ${depth}`
}

/**
 * The newest `depth` posts of the feed of `viewerId` as (created_at, post_id), in one statement
 * (one snapshot: a post the fan-out moves from pending into the timeline meanwhile is seen in one
 * place or the other): the timeline (a trim deletes what lies at or below the floor in the same
 * transaction), merged with the newest `depth` posts of each followed pulled author, of each
 * followee whose backfill is pending, and with the pending posts, all from the page bound up.
 * UNION removes a post that is in two of them (one a pulled author wrote before it became one,
 * one a follow backfilled while pending). The CROSS JOIN fixes the loop order: the few pulled
 * authors, each checked in the follows primary key, rather than every account the viewer
 * follows checked against them; the viewer's pending backfills are one range of their key.
 */
export function timelineIdsQuery(db: ReadDb, viewerId: number | Placeholder, depth: number | Placeholder) {
  const merged = sql`
    select created_at, post_id from (
      select created_at, post_id from ${timelines}
      where user_id = ${viewerId} and ${noSuspendedAuthor(sql`post_id`)}
      order by created_at desc, post_id desc limit ${depth})
    union
    select created_at, post_id from (
      select p.created_at as created_at, p.id as post_id from ${timelinePulledAuthors} pa
      cross join ${follows} f on f.follower_id = ${viewerId} and f.following_id = pa.user_id and ${hiddenFromFeed(viewerId, sql`pa.user_id`)}
      join ${posts} p on p.id in (${authorNewest(sql`pa.user_id`, 'p2', viewerId, depth)}))
    union
    select created_at, post_id from (
      select p.created_at as created_at, p.id as post_id from ${timelineBackfills} b
      cross join ${follows} f on f.follower_id = b.follower_id and f.following_id = b.followee_id and ${hiddenFromFeed(viewerId, sql`b.followee_id`)}
      join ${posts} p on p.id in (${authorNewest(sql`b.followee_id`, 'p3', viewerId, depth)})
      where b.follower_id = ${viewerId})
    union
    select created_at, post_id from (${pendingIdsQuery(viewerId, depth)})
    order by created_at desc, post_id desc limit ${depth}`
  // One row: the entries as one JSON text, `[[created_at, post_id], ...]` (the libsql binding hands
  // rows over one value at a time; see posts.ts postRowsAsJson), put newest first by the caller (an
  // aggregate's own ORDER BY is SQLite 3.44 syntax that libsql servers' parser refuses), and the
  // floor, read in the same snapshot as the entries (a trim moves both in one transaction).
  // Through the query builder, so every driver (the write client, the reader pool) runs it alike.
  return db
    .select({
      entries: sql<string>`json_group_array(json_array(created_at, post_id))`,
      floor: sql<number | null>`(select fl.created_at from ${timelineFloors} fl where fl.user_id = ${viewerId})`,
    })
    .from(sql`(${merged})`)
}

const timelineIds = prepared((db) => timelineIdsQuery(db, sql.placeholder('viewer'), sql.placeholder('depth')).prepare())

/**
 * The ids of the newest `depth` feed posts of `viewerId`, newest first; null when the timeline
 * cannot answer exactly (the page reaches below its floor) and the caller must use the direct
 * query. One prepared query: an index range of the timeline (merged with the pulled authors'
 * newest posts and the pending posts) and, in the same row, the floor's primary-key lookup.
 */
export async function timelineFeedIds(db: ReadDb, viewerId: number, depth: number): Promise<number[] | null> {
  const row = (await timelineIds(db).get({ viewer: viewerId, depth }))!
  const entries = (JSON.parse(row.entries) as Array<[createdAt: number, postId: number]>).sort((a, b) => b[0] - a[0] || b[1] - a[1])
  // Complete above the floor: the answer is exact when all `depth` entries lie above it.
  if (row.floor !== null && (entries.length < depth || entries[depth - 1][0] <= row.floor)) return null
  return entries.map((entry) => entry[1])
}
