import { TRPCError } from '@trpc/server'
import { and, eq, sql, type Placeholder } from 'drizzle-orm'
import type { UserProfile, UserSummary } from '../../shared/types.js'
import type { Db, ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { followRequests, follows, stories, users } from '../db/schema.js'
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

const followsProbe = prepared((db) =>
  db
    .select({ one: sql<number>`1` })
    .from(follows)
    .where(and(eq(follows.followerId, sql.placeholder('viewer')), eq(follows.followingId, sql.placeholder('user'))))
    .limit(1)
    .prepare(),
)

/**
 * What a private account shows beyond its profile's header and counts (its posts, its followers
 * and following lists) is for its owner and approved followers: anyone else gets 403 "This account
 * is private" (its existence is no secret: the profile says it is private). One probe of the follows
 * primary key, made only for a private account.
 */
export async function assertSeesAccount(db: ReadDb, user: Pick<UserRow, 'id' | 'isPrivate'>, viewerId: number | null): Promise<void> {
  if (!user.isPrivate || user.id === viewerId) return
  if (viewerId !== null && (await followsProbe(db).get({ viewer: viewerId, user: user.id }))) return
  throw new TRPCError({ code: 'FORBIDDEN', message: 'This account is private' })
}

/**
 * A user row with what a profile adds to it, in the same query: the active stories (a range of
 * `stories_user_expires_idx`) and whether the `viewer` placeholder follows them (the follows
 * primary key; never oneself, and viewer 0 is nobody).
 */
const profileColumns = () => ({
  // What a profile shows of the row (views.ts ProfileUser), not the whole row: the users table also
  // holds the password hash, two-factor and mail state, none of which a profile reads.
  user: {
    id: users.id,
    username: users.username,
    fullName: users.fullName,
    bio: users.bio,
    avatar: users.avatar,
    avatarAlt: users.avatarAlt,
    isVerified: users.isVerified,
    followersCount: users.followersCount,
    followingCount: users.followingCount,
    postsCount: users.postsCount,
    isPrivate: users.isPrivate,
  },
  // "users"."id" spelled out: drizzle leaves columns unqualified in a one-table select, where the
  // subquery would read a bare "id" as its own table's.
  activeStories: sql<number>`(select count(*) from ${stories} as s where s.user_id = "users"."id" and s.expires_at > ${sql.placeholder('now')})`.mapWith(Number),
  isFollowing: sql<boolean>`("users"."id" <> ${sql.placeholder('viewer')} and exists (select 1 from ${follows} as f where f.follower_id = ${sql.placeholder('viewer')} and f.following_id = "users"."id"))`.mapWith(Boolean),
  // Probed only for a private account: nobody can have a pending request to a public one.
  followRequested: sql<boolean>`("users"."is_private" = 1 and exists (select 1 from ${followRequests} as fr where fr.requester_id = ${sql.placeholder('viewer')} and fr.target_id = "users"."id"))`.mapWith(Boolean),
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
  avatarAlt: string
  isVerified: boolean
  isFollowing: boolean
  isPrivate: boolean
}

export function toUserSummary(row: UserSummaryRow): Bare<UserSummary> {
  return {
    id: row.id,
    username: row.username,
    full_name: row.fullName,
    avatar: row.avatar,
    avatar_alt: row.avatarAlt,
    is_verified: row.isVerified,
    is_following: Boolean(row.isFollowing),
    is_private: Boolean(row.isPrivate),
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
    avatarAlt: users.avatarAlt,
    isVerified: users.isVerified,
    isFollowing: sql<boolean>`exists (select 1 from ${follows} as vf where vf.follower_id = ${viewerId ?? 0} and vf.following_id = "users"."id")`.mapWith(Boolean),
    isPrivate: users.isPrivate,
  }
}

/** Sets or clears the verified badge (operator only: `plaza admin verify`). */
export async function setVerified(db: Db, username: string, verified: boolean, now: Date): Promise<UserProfile> {
  const user = await findUser(db, username)
  await db.update(users).set({ isVerified: verified }).where(eq(users.id, user.id))
  // As the user sees it: a suspended account is hidden from everyone else, operators included.
  return loadProfile(db, user.id, user.id, now)
}
