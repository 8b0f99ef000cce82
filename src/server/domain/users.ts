import { TRPCError } from '@trpc/server'
import { and, eq, sql, type Placeholder } from 'drizzle-orm'
import type { UpdateProfile } from '../../shared/schemas/users.js'
import type { UserProfile, UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { assertOwnUpload } from '../uploads/references.js'
import { follows, stories, users } from '../db/schema.js'
import { authorVisibleTo } from './relations.js'
import { withMediaOne, type Bare } from './media.js'
import { toProfile } from './views.js'

type UserRow = typeof users.$inferSelect

/** The two ways a request names a user: its id, or its username in any case (`users_username_lower_idx`). */
const idIs = () => eq(users.id, sql.placeholder('id'))
const usernameIs = () => eq(sql`lower(${users.username})`, sql.placeholder('name'))

/** The placeholder values for the lookup `ref` calls for. */
function refParams(ref: number | string): { id: number } | { name: string } {
  return typeof ref === 'number' ? { id: ref } : { name: ref.toLowerCase() }
}

const userById = prepared((db) => db.select().from(users).where(idIs()).limit(1).prepare())
const userByName = prepared((db) => db.select().from(users).where(usernameIs()).limit(1).prepare())

/** Finds a user by numeric id or (case-insensitive) username; 404 when there is none. Prepared: many requests start with it. */
export async function findUser(db: ReadDb, ref: number | string): Promise<UserRow> {
  const user = await (typeof ref === 'number' ? userById(db) : userByName(db)).get(refParams(ref))
  if (!user) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return user
}

const visibleUserById = prepared((db) => db.select().from(users).where(and(idIs(), authorVisibleTo(sql.placeholder('viewer')))).limit(1).prepare())
const visibleUserByName = prepared((db) => db.select().from(users).where(and(usernameIs(), authorVisibleTo(sql.placeholder('viewer')))).limit(1).prepare())

/**
 * findUser as `viewerId` may see it: a user who blocked the viewer or whom the viewer blocked, or
 * a suspended account, answers 404 exactly like one that does not exist (relations.ts).
 */
export async function findVisibleUser(db: ReadDb, ref: number | string, viewerId: number | null): Promise<UserRow> {
  const user = await (typeof ref === 'number' ? visibleUserById(db) : visibleUserByName(db)).get({ ...refParams(ref), viewer: viewerId ?? 0 })
  if (!user) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return user
}

/**
 * A user row with what a profile adds to it, in the same query: the active stories (a range of
 * `stories_user_expires_idx`) and whether the `viewer` placeholder follows them (the follows
 * primary key; never oneself, and viewer 0 is nobody).
 */
const profileColumns = () => ({
  user: users,
  // "users"."id" spelled out: drizzle leaves columns unqualified in a one-table select, where the
  // subquery would read a bare "id" as its own table's.
  activeStories: sql<number>`(select count(*) from ${stories} as s where s.user_id = "users"."id" and s.expires_at > ${sql.placeholder('now')})`.mapWith(Number),
  isFollowing: sql<boolean>`("users"."id" <> ${sql.placeholder('viewer')} and exists (select 1 from ${follows} as f where f.follower_id = ${sql.placeholder('viewer')} and f.following_id = "users"."id"))`.mapWith(Boolean),
})

const profileById = prepared((db) => db.select(profileColumns()).from(users).where(and(idIs(), authorVisibleTo(sql.placeholder('viewer')))).limit(1).prepare())
const profileByName = prepared((db) => db.select(profileColumns()).from(users).where(and(usernameIs(), authorVisibleTo(sql.placeholder('viewer')))).limit(1).prepare())

/**
 * The profile of the user `ref` names with its live counts, and whether `viewerId` follows it:
 * one prepared query, as a profile is among the most requested answers. 404 when there is none,
 * or when a block or a suspension hides it from the viewer (relations.ts).
 */
export async function loadProfile(db: ReadDb, ref: number | string, viewerId: number | null, now: Date): Promise<UserProfile> {
  const row = await (typeof ref === 'number' ? profileById(db) : profileByName(db)).get({ ...refParams(ref), viewer: viewerId ?? 0, now: now.getTime() })
  if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return withMediaOne(db, toProfile(row.user, row))
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

export function toUserSummary(row: UserSummaryRow): Bare<UserSummary> {
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
export function userSummaryColumns(viewerId: number | Placeholder | null) {
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
  return loadProfile(db, userId, userId, now)
}

/** Sets or clears the verified badge (operator only: `plaza admin verify`). */
export async function setVerified(db: Db, username: string, verified: boolean, now: Date): Promise<UserProfile> {
  const user = await findUser(db, username)
  await db.update(users).set({ isVerified: verified }).where(eq(users.id, user.id))
  // As the user sees it: a suspended account is hidden from everyone else, operators included.
  return loadProfile(db, user.id, user.id, now)
}
