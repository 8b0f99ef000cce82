import { TRPCError } from '@trpc/server'
import { and, count, eq, gt, sql } from 'drizzle-orm'
import type { UserProfile } from '../../shared/types.js'
import type { Db } from '../db/client.js'
import { follows, stories, users } from '../db/schema.js'
import { toProfile } from './views.js'

type UserRow = typeof users.$inferSelect

/** Finds a user by numeric id or (case-insensitive) username; 404 when there is none. */
export async function findUser(db: Db, ref: number | string): Promise<UserRow> {
  const [user] = await db
    .select()
    .from(users)
    .where(typeof ref === 'number' ? eq(users.id, ref) : eq(sql`lower(${users.username})`, ref.toLowerCase()))
    .limit(1)
  if (!user) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return user
}

/** Whether `followerId` follows `followingId` (served by the follows primary key). */
export async function isFollowing(db: Db, followerId: number | null, followingId: number): Promise<boolean> {
  if (!followerId || followerId === followingId) return false
  const rows = await db
    .select({ one: sql`1` })
    .from(follows)
    .where(and(eq(follows.followerId, followerId), eq(follows.followingId, followingId)))
    .limit(1)
  return rows.length > 0
}

/** A profile with its live counts, and whether `viewerId` follows it. */
export async function getProfile(db: Db, user: UserRow, viewerId: number | null, now: Date): Promise<UserProfile> {
  const [[{ activeStories }], following] = await Promise.all([
    db
      .select({ activeStories: count() })
      .from(stories)
      .where(and(eq(stories.userId, user.id), gt(stories.expiresAt, now.getTime()))),
    isFollowing(db, viewerId, user.id),
  ])
  return toProfile(user, { isFollowing: following, activeStories })
}
