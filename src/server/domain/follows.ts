import { TRPCError } from '@trpc/server'
import { and, desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { UserProfile, UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { leanStatement, prepared } from '../db/prepared.js'
import { followRequests, follows, stories, users } from '../db/schema.js'
import { pagesQuery, type Warm } from '../db/warm.js'
import type { Fanout } from './fanout.js'
import { notificationPages, notify } from './notifications.js'
import { readerForPage } from './page-depth.js'
import type { Paging } from './posts.js'
import { dropBackfill, followTimelinePages, pruneTimeline, queueBackfill } from './timelines.js'
import { authorVisibleTo, unblocked } from './relations.js'
import { assertSeesAccount, findVisibleUser, loadProfile, toUserSummary, userSummaryColumns } from './users.js'
import { withMedia, withMediaOne } from './media.js'
import { toProfile, type ProfileUser } from './views.js'

/** Whom a follow or unfollow names: a user the caller may see (a block either way or a suspension answers 404). */
async function target(reads: ReadDb, followerId: number, ref: number | string) {
  const user = await findVisibleUser(reads, ref, followerId)
  if (user.id === followerId) throw new TRPCError({ code: 'BAD_REQUEST', message: 'You cannot follow yourself' })
  return user
}

/**
 * Both counters of a follow row that came (`delta` 1) or went (-1), in one statement: the
 * followee's followers_count and the follower's following_count.
 */
function countFollow(tx: Tx, followerId: number, followeeId: number, delta: 1 | -1) {
  return tx.run(followCounters({ follower: followerId, followee: followeeId, delta }))
}

const setFollowCounters = (v: Record<'follower' | 'followee' | 'delta', Placeholder>) => sql`
    update ${users} set
      followers_count = followers_count + (case when id = ${v.followee} then ${v.delta} else 0 end),
      following_count = following_count + (case when id = ${v.follower} then ${v.delta} else 0 end)
    where id in (${v.followee}, ${v.follower})`

const followCounters = leanStatement(['follower', 'followee', 'delta'], setFollowCounters)

/**
 * A new follow's two counters (`delta` 1), answering the followee's profile columns as the write
 * leaves them, with its stories live at `now` and its suspension: the follow's answer, read under
 * the write lock, so no read of the profile after the commit (on the 1M-post network that read was
 * about 7% of a serving process's time in a follow round).
 */
const countNewFollow = leanStatement(
  ['follower', 'followee', 'delta', 'now'],
  (v) => sql`${setFollowCounters(v)}
    returning id, username, full_name as "fullName", bio, avatar, avatar_alt as "avatarAlt", is_verified as "isVerified",
      followers_count as "followersCount", following_count as "followingCount", posts_count as "postsCount",
      is_private as "isPrivate", suspended_at as "suspendedAt",
      case when id = ${v.followee} then (select count(*) from ${stories} s where s.user_id = ${users}.id and s.expires_at > ${v.now}) end as "activeStories"`,
)

/** A row `countNewFollow` returns (`isVerified` as SQLite stores it, 0 or 1). */
type CountedUser = Omit<ProfileUser, 'isVerified' | 'isPrivate'> & { isVerified: number; isPrivate: number; suspendedAt: number | null; activeStories: number | null }

/** A follow row unless a block stands between the two (its test repeated under the write lock); nothing for a repeat. */
const insertFollow = leanStatement(
  ['follower', 'followee', 'at'],
  (v) => sql`
    insert into ${follows} (follower_id, following_id, created_at) select ${v.follower}, ${v.followee}, ${v.at}
    where ${unblocked(v.follower, v.followee)}
    on conflict do nothing`,
)

/**
 * The leaves a new follow writes, for `warm` (db/warm.ts): the pair's place in the primary key,
 * the end of the followee's range in follows_following_created_idx (a new follow is the newest),
 * and the notification's. The two users' rows were just read (the session, the target); the
 * backfill's pages are the runner's to warm.
 */
export const followPages = pagesQuery(['follower', 'followee'], ({ follower, followee }) => [
  sql`select 1 from ${follows} where follower_id = ${follower} and following_id = ${followee}`,
  sql`select max(created_at) from ${follows} indexed by follows_following_created_idx where following_id = ${followee}`,
  ...notificationPages(followee),
])

/**
 * The leaves an unfollow changes, for `warm`: the follow's entries in the primary key and in
 * follows_following_created_idx (found by its created_at; the index carries the primary key, so it
 * is one exact key) and the follower's timeline the prune deletes from.
 */
export const unfollowPages = pagesQuery(['follower', 'followee'], ({ follower, followee }) => {
  const since = sql`(select created_at from ${follows} where follower_id = ${follower} and following_id = ${followee})`
  return [
    since,
    sql`select 1 from ${follows} indexed by follows_following_created_idx where following_id = ${followee} and created_at = ${since} and follower_id = ${follower}`,
    ...followTimelinePages(follower, followee),
  ]
})

/**
 * Follows `ref` (idempotent: following again changes nothing); a private account is asked instead
 * (requestFollow). Both counters, the target's notification and the pending backfill of the
 * follower's timeline (timelines.ts queueBackfill; the fan-out runner does it, and the feed merges
 * the followee's posts until then) are written in the same transaction as the follow row, and only
 * if it was new (addFollow). The statements are lean `sql` rendered once (leanStatement: a
 * fraction of what building them costs) as they run under the write lock; the target is a prepared
 * lookup on `reads`, and the pages the write changes are read (`warm`) before it, outside the lock.
 * A new follow answers the profile its counter update returned; a repeat (or a follow a block or a
 * suspension committed meanwhile refused) reads it.
 *
 * Whether the target is private is read with it, before the transaction: an account that turns
 * private meanwhile keeps its followers (turning private does), so a follow that crossed the switch
 * is one that came just before it. The other way, requestFollow checks under the write lock.
 */
export async function follow(db: Db, reads: ReadDb, warm: Warm, fanout: Pick<Fanout, 'notify'>, followerId: number, ref: number | string, now: Date): Promise<UserProfile> {
  const followee = await target(reads, followerId, ref)
  if (followee.isPrivate && (await requestFollow(db, followerId, followee.id, now))) return loadProfile(reads, followee.id, followerId, now)
  await warm(followPages({ follower: followerId, followee: followee.id }))
  const counted = await writeTransaction(db, (tx) => addFollow(tx, followerId, followee.id, now))
  if (counted) fanout.notify()
  if (counted && counted.suspendedAt === null) {
    const profile = toProfile(
      { ...counted, isVerified: Boolean(counted.isVerified), isPrivate: Boolean(counted.isPrivate) },
      { activeStories: counted.activeStories ?? 0, isFollowing: true, followRequested: false },
    )
    return withMediaOne(reads, profile)
  }
  return loadProfile(reads, followee.id, followerId, now)
}

/**
 * The follow row unless a block stands between the two, with both counters, the followee's `follow`
 * notification and the follower's pending backfill, in the caller's transaction; the followee's
 * profile columns as the counter update returned them, or null when nothing was new. A follow and
 * the approval of a follow request (follow-requests.ts) both make one this way. The caller tells
 * the fan-out runner (`fanout.notify()`) after commit when one was made.
 */
export async function addFollow(tx: Tx, followerId: number, followeeId: number, now: Date): Promise<CountedUser | null> {
  // The block test is repeated under the write lock: a block committed since the target was read wins.
  const inserted = await tx.run(insertFollow({ follower: followerId, followee: followeeId, at: now.getTime() }))
  if (inserted.rowsAffected === 0) return null
  const rows = await tx.all<CountedUser>(countNewFollow({ follower: followerId, followee: followeeId, delta: 1, now: now.getTime() }))
  await notify(tx, { userId: followeeId, actorId: followerId, type: 'follow' }, now)
  await tx.run(queueBackfill({ follower: followerId, followee: followeeId }))
  return rows.find((row) => row.id === followeeId) ?? null
}

/**
 * Asks to follow a private account (idempotent): a request row and the owner's `follow_request`
 * notification, whose id the row keeps so that approving, denying or cancelling takes it away too.
 * Nothing when the caller already follows the account or a block stands between them. False when
 * the account is no longer private (tested under the write lock): the caller then follows it.
 */
async function requestFollow(db: Db, requesterId: number, targetId: number, now: Date): Promise<boolean> {
  return writeTransaction(db, async (tx) => {
    const [state] = await tx.values<[number, number]>(sql`
      select is_private, exists (select 1 from ${follows} where follower_id = ${requesterId} and following_id = ${targetId})
      from ${users} where id = ${targetId}`)
    if (!state || !state[0]) return false
    if (state[1]) return true
    const inserted = await tx.run(sql`
      insert into ${followRequests} (requester_id, target_id, created_at) select ${requesterId}, ${targetId}, ${now.getTime()}
      where ${unblocked(requesterId, targetId)}
      on conflict do nothing`)
    if (inserted.rowsAffected === 0) return true
    const [note] = await tx.values<[number]>(sql`
      insert into notifications (user_id, actor_id, type, created_at) values (${targetId}, ${requesterId}, 'follow_request', ${now.getTime()}) returning id`)
    await tx.run(sql`update ${followRequests} set notification_id = ${note[0]} where requester_id = ${requesterId} and target_id = ${targetId}`)
    return true
  })
}

/**
 * Takes away `requesterId`'s pending request to follow `targetId` and its notification, in the
 * caller's transaction; whether there was one. Approving, denying and cancelling (unfollow) all do.
 */
export async function takeFollowRequest(tx: Tx, requesterId: number, targetId: number): Promise<boolean> {
  const [request] = await tx.values<[number | null]>(sql`
    delete from ${followRequests} where requester_id = ${requesterId} and target_id = ${targetId} returning notification_id`)
  if (!request) return false
  if (request[0] !== null) await tx.run(sql`delete from notifications where id = ${request[0]}`)
  return true
}

/**
 * Unfollows `ref` (idempotent); counters change, and the target's posts leave the follower's
 * timeline, only when a follow row was really removed. Lean and warmed like `follow`. A pending
 * request to follow a private account is cancelled the same way (as Instagram's "Requested" button).
 */
export async function unfollow(db: Db, reads: ReadDb, warm: Warm, followerId: number, ref: number | string, now: Date): Promise<UserProfile> {
  const followee = await target(reads, followerId, ref)
  await warm(unfollowPages({ follower: followerId, followee: followee.id }))
  await writeTransaction(db, async (tx) => {
    await removeFollow(tx, followerId, followee.id)
    if (followee.isPrivate) await takeFollowRequest(tx, followerId, followee.id)
  })
  return loadProfile(reads, followee.id, followerId, now)
}

/** Removes the follow row if there is one, and then its counters and the followee's posts in the follower's timeline (the caller's transaction). */
export async function removeFollow(tx: Tx, followerId: number, followeeId: number): Promise<void> {
  const deleted = await tx.run(sql`delete from follows where follower_id = ${followerId} and following_id = ${followeeId}`)
  if (deleted.rowsAffected === 0) return
  await countFollow(tx, followerId, followeeId, -1)
  await tx.run(dropBackfill({ follower: followerId, followee: followeeId }))
  await pruneTimeline(tx, followerId, followeeId)
}

type Param = number | Placeholder

/**
 * Who follows `userId`, most recent first (`follows_following_created_idx`); values or placeholders.
 * Ties in time break by follower id, which that index carries (follows is WITHOUT ROWID), so no extra sort.
 */
function followersSelect(db: ReadDb, userId: Param, viewerId: Param | null, limit: Param, offset: Param) {
  return db
    .select(userSummaryColumns(viewerId))
    .from(follows)
    .innerJoin(users, eq(users.id, follows.followerId))
    .where(and(eq(follows.followingId, userId), authorVisibleTo(viewerId ?? 0)))
    .orderBy(desc(follows.createdAt), desc(follows.followerId))
    .limit(limit)
    .offset(offset)
}

/**
 * Whom `userId` follows, most recent first; values or placeholders. The primary key's range
 * (follower_id, following_id) holds every followed id and its created_at (follows is WITHOUT ROWID),
 * so there is no index by time (migration 0018): the page is sorted from that range, ids first (the
 * sorter holds an id and a time per row, and only the visible; a user follows hundreds), and its
 * users are joined after paging. Ties in time break by followed id, as before.
 */
function followingSelect(db: ReadDb, userId: Param, viewerId: Param | null, limit: Param, offset: Param) {
  const page = db.$with('page').as(
    db
      .select({ id: follows.followingId, at: follows.createdAt })
      .from(follows)
      .innerJoin(users, eq(users.id, follows.followingId))
      .where(and(eq(follows.followerId, userId), authorVisibleTo(viewerId ?? 0)))
      .orderBy(desc(follows.createdAt), desc(follows.followingId))
      .limit(limit)
      .offset(offset),
  )
  return db
    .with(page)
    .select(userSummaryColumns(viewerId))
    .from(page)
    .innerJoin(users, eq(users.id, page.id))
    .orderBy(desc(page.at), desc(page.id))
}

/** One page of followers (one extra row tells whether there is another); exported for its query plan. */
export function followersQuery(db: ReadDb, userId: number, viewerId: number | null, { page, limit }: Paging) {
  return followersSelect(db, userId, viewerId, limit + 1, (page - 1) * limit)
}

/** One page of followed users, as `followersQuery`. */
export function followingQuery(db: ReadDb, userId: number, viewerId: number | null, { page, limit }: Paging) {
  return followingSelect(db, userId, viewerId, limit + 1, (page - 1) * limit)
}

const placeholders = [sql.placeholder('user'), sql.placeholder('viewer'), sql.placeholder('limit'), sql.placeholder('offset')] as const
const followersPage = prepared((db) => followersSelect(db, ...placeholders).prepare())
const followingPage = prepared((db) => followingSelect(db, ...placeholders).prepare())

/**
 * A page of `ref`'s followers or followed users, with whether `viewerId` follows each (403 for a
 * private account the viewer does not follow: users.ts assertSeesAccount). Prepared;
 * a shallow page is read inline (`reads`), a deep one, or any page of whom a user following more
 * than INLINE_PAGE_DEPTH accounts follows, by the `scans` workers (page-depth.ts).
 */
export async function listFollows(
  dbs: { reads: ReadDb; scans: ReadDb },
  which: 'followers' | 'following',
  ref: number | string,
  viewerId: number | null,
  paging: Paging,
): Promise<{ users: UserSummary[]; page: number; has_more: boolean }> {
  const user = await findVisibleUser(dbs.reads, ref, viewerId)
  await assertSeesAccount(dbs.reads, user, viewerId)
  // A page of followers reads down to its depth in the index; a page of whom they follow sorts all of them.
  const page = which === 'followers' ? followersPage(readerForPage(dbs, paging)) : followingPage(readerForPage(dbs, paging, user.followingCount))
  const rows = await page.all({ user: user.id, viewer: viewerId ?? 0, limit: paging.limit + 1, offset: (paging.page - 1) * paging.limit })
  return { users: await withMedia(dbs.reads, rows.slice(0, paging.limit).map(toUserSummary)), page: paging.page, has_more: rows.length > paging.limit }
}
