import { TRPCError } from '@trpc/server'
import { and, desc, eq, sql } from 'drizzle-orm'
import type { UserProfile, UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { follows, users } from '../db/schema.js'
import { notify } from './notifications.js'
import type { Paging } from './posts.js'
import { backfillTimeline, pruneTimeline } from './timelines.js'
import { findUser, getProfile, toUserSummary, userSummaryColumns } from './users.js'

async function target(db: Db, followerId: number, ref: number | string) {
  const user = await findUser(db, ref)
  if (user.id === followerId) throw new TRPCError({ code: 'BAD_REQUEST', message: 'You cannot follow yourself' })
  return user
}

/**
 * Follows `ref` (idempotent: following again changes nothing). Both counters, the target's
 * notification and the backfill of the follower's timeline are written in the same transaction
 * as the follow row, and only if it was new.
 */
export async function follow(db: Db, followerId: number, ref: number | string, now: Date): Promise<UserProfile> {
  const user = await target(db, followerId, ref)
  await writeTransaction(db, async (tx) => {
    const inserted = await tx
      .insert(follows)
      .values({ followerId, followingId: user.id, createdAt: now.getTime() })
      .onConflictDoNothing()
      .returning({ id: follows.followingId })
    if (inserted.length === 0) return
    await tx.update(users).set({ followersCount: sql`${users.followersCount} + 1` }).where(eq(users.id, user.id))
    await tx.update(users).set({ followingCount: sql`${users.followingCount} + 1` }).where(eq(users.id, followerId))
    await notify(tx, { userId: user.id, actorId: followerId, type: 'follow' }, now)
    await backfillTimeline(tx, followerId, user.id)
  })
  return getProfile(db, await findUser(db, user.id), followerId, now)
}

/**
 * Unfollows `ref` (idempotent); counters change, and the target's posts leave the follower's
 * timeline, only when a follow row was really removed.
 */
export async function unfollow(db: Db, followerId: number, ref: number | string, now: Date): Promise<UserProfile> {
  const user = await target(db, followerId, ref)
  await writeTransaction(db, async (tx) => {
    const deleted = await tx
      .delete(follows)
      .where(and(eq(follows.followerId, followerId), eq(follows.followingId, user.id)))
      .returning({ id: follows.followingId })
    if (deleted.length === 0) return
    await tx.update(users).set({ followersCount: sql`${users.followersCount} - 1` }).where(eq(users.id, user.id))
    await tx.update(users).set({ followingCount: sql`${users.followingCount} - 1` }).where(eq(users.id, followerId))
    await pruneTimeline(tx, followerId, user.id)
  })
  return getProfile(db, await findUser(db, user.id), followerId, now)
}

/** Ties in time break by insertion order; the rowid is the last column of every follows index, so no extra sort. */
const followRowid = sql`"follows"."rowid"`

/** Who follows `userId`, most recent first (`follows_following_created_idx`). */
export function followersQuery(db: ReadDb, userId: number, viewerId: number | null, { page, limit }: Paging) {
  return db
    .select(userSummaryColumns(viewerId))
    .from(follows)
    .innerJoin(users, eq(users.id, follows.followerId))
    .where(eq(follows.followingId, userId))
    .orderBy(desc(follows.createdAt), desc(followRowid))
    .limit(limit + 1)
    .offset((page - 1) * limit)
}

/** Whom `userId` follows, most recent first (`follows_follower_created_idx`). */
export function followingQuery(db: ReadDb, userId: number, viewerId: number | null, { page, limit }: Paging) {
  return db
    .select(userSummaryColumns(viewerId))
    .from(follows)
    .innerJoin(users, eq(users.id, follows.followingId))
    .where(eq(follows.followerId, userId))
    .orderBy(desc(follows.createdAt), desc(followRowid))
    .limit(limit + 1)
    .offset((page - 1) * limit)
}

export async function listFollows(
  db: ReadDb,
  which: 'followers' | 'following',
  ref: number | string,
  viewerId: number | null,
  paging: Paging,
): Promise<{ users: UserSummary[]; page: number; has_more: boolean }> {
  const user = await findUser(db, ref)
  const rows = await (which === 'followers' ? followersQuery : followingQuery)(db, user.id, viewerId, paging)
  return { users: rows.slice(0, paging.limit).map(toUserSummary), page: paging.page, has_more: rows.length > paging.limit }
}
