import { TRPCError } from '@trpc/server'
import { and, count, eq, gt, sql } from 'drizzle-orm'
import type { UpdateProfile } from '../../shared/schemas/users.js'
import type { UserProfile, UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { assertOwnUpload } from '../uploads/references.js'
import { follows, stories, users } from '../db/schema.js'
import { toProfile } from './views.js'

type UserRow = typeof users.$inferSelect

/** Finds a user by numeric id or (case-insensitive) username; 404 when there is none. */
export async function findUser(db: ReadDb, ref: number | string): Promise<UserRow> {
  const [user] = await db
    .select()
    .from(users)
    .where(typeof ref === 'number' ? eq(users.id, ref) : eq(sql`lower(${users.username})`, ref.toLowerCase()))
    .limit(1)
  if (!user) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return user
}

/** Whether `followerId` follows `followingId` (served by the follows primary key). */
export async function isFollowing(db: ReadDb, followerId: number | null, followingId: number): Promise<boolean> {
  if (!followerId || followerId === followingId) return false
  const rows = await db
    .select({ one: sql`1` })
    .from(follows)
    .where(and(eq(follows.followerId, followerId), eq(follows.followingId, followingId)))
    .limit(1)
  return rows.length > 0
}

/** A profile with its live counts, and whether `viewerId` follows it. */
export async function getProfile(db: ReadDb, user: UserRow, viewerId: number | null, now: Date): Promise<UserProfile> {
  const [[{ activeStories }], following] = await Promise.all([
    db
      .select({ activeStories: count() })
      .from(stories)
      .where(and(eq(stories.userId, user.id), gt(stories.expiresAt, now.getTime()))),
    isFollowing(db, viewerId, user.id),
  ])
  return toProfile(user, { isFollowing: following, activeStories })
}

/** A row of a user list: the user and whether the caller follows them. */
export interface UserSummaryRow {
  id: number
  username: string
  fullName: string
  avatar: string
  isVerified: boolean
  isFollowing: boolean
}

export function toUserSummary(row: UserSummaryRow): UserSummary {
  return {
    id: row.id,
    username: row.username,
    full_name: row.fullName,
    avatar: row.avatar,
    is_verified: row.isVerified,
    is_following: Boolean(row.isFollowing),
  }
}

/**
 * The UserSummary columns for `viewerId`: `is_following` is a lookup in the follows primary key
 * inside the same query (no query per row). Callers select from `users` (joined as they need).
 */
export function userSummaryColumns(viewerId: number | null) {
  return {
    id: users.id,
    username: users.username,
    fullName: users.fullName,
    avatar: users.avatar,
    isVerified: users.isVerified,
    isFollowing: sql<boolean>`exists (select 1 from ${follows} as vf where vf.follower_id = ${viewerId ?? 0} and vf.following_id = "users"."id")`.mapWith(Boolean),
  }
}

/** Changes the fields given (an empty avatar removes it); an avatar must be the caller's own upload. */
export async function updateProfile(db: Db, userId: number, input: UpdateProfile, now: Date): Promise<UserProfile> {
  const changes: Partial<typeof users.$inferInsert> = {}
  if (input.full_name !== undefined) changes.fullName = input.full_name
  if (input.bio !== undefined) changes.bio = input.bio
  if (input.avatar !== undefined) changes.avatar = input.avatar
  if (Object.keys(changes).length > 0) {
    await writeTransaction(db, async (tx) => {
      if (input.avatar) await assertOwnUpload(tx, userId, input.avatar)
      await tx.update(users).set(changes).where(eq(users.id, userId))
    })
  }
  return getProfile(db, await findUser(db, userId), userId, now)
}

/** Sets or clears the verified badge (operator only: `plaza admin verify`). */
export async function setVerified(db: Db, username: string, verified: boolean, now: Date): Promise<UserProfile> {
  const user = await findUser(db, username)
  const [updated] = await db.update(users).set({ isVerified: verified }).where(eq(users.id, user.id)).returning()
  return getProfile(db, updated, null, now)
}
