/**
 * Blocks and mutes between users (docs/safety.md), and the SQL conditions every read path uses
 * to hide what a block, a mute or a suspension hides.
 *
 * - A **block** is symmetric in effect: it removes the follows both ways (counters and timelines
 *   with them) and the notifications between the two; afterwards neither sees the other's
 *   posts, comments, stories or profile anywhere (a 404 where one is asked for by id), and
 *   neither can follow, like, comment on or view the other's story.
 * - A **mute** is one-sided and quiet: the muted account's posts and stories leave the muter's
 *   home feed and story feed only (the muter's timeline is pruned, the fan-out skips the muter,
 *   an unmute backfills); everything else stays as it was.
 * - A **suspended** account's content is hidden from everyone else until it is unsuspended, by
 *   the same read-time conditions (users_suspended_idx keeps those accounts as one small set).
 */
import { TRPCError } from '@trpc/server'
import { desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { blocks, mutes, users } from '../db/schema.js'
import { removeFollow, takeFollowRequest } from './follows.js'
import { withMedia } from './media.js'
import { readerForPage } from './page-depth.js'
import type { Paging } from './posts.js'
import { backfillTimeline, pruneTimeline } from './timelines.js'
import { findUser, toUserSummary, userSummaryColumns } from './users.js'

type Param = number | Placeholder | SQL | SQLiteColumn

/**
 * Neither `viewer` nor `other` has blocked the other: two probes of the blocks primary key (an
 * anonymous viewer, 0, has no blocks). Used as a WHERE term wherever another user's content or
 * profile is shown to `viewer`.
 */
export function unblocked(viewer: Param, other: Param): SQL {
  return sql`(not exists (select 1 from ${blocks} where blocker_id = ${viewer} and blocked_id = ${other})
    and not exists (select 1 from ${blocks} where blocker_id = ${other} and blocked_id = ${viewer}))`
}

/** `viewer` has not muted `other` (one probe of the mutes primary key). */
export function unmuted(viewer: Param, other: Param): SQL {
  return sql`not exists (select 1 from ${mutes} where muter_id = ${viewer} and muted_id = ${other})`
}

/**
 * `userId` is not a suspended account: for queries that do not join `users` (where they do,
 * `users.suspended_at is null` says it directly). The subquery does not depend on the row, so
 * SQLite reads the partial users_suspended_idx once per statement.
 */
export function notSuspended(userId: Param): SQL {
  return sql`${userId} not in (select id from ${users} where suspended_at is not null)`
}

/**
 * Content by `author` may be shown to `viewer`: it is the viewer's own, or its author is neither
 * suspended nor blocked either way. For queries over posts, comments or stories that need not
 * join `users`.
 */
export function authorShownTo(viewer: Param, author: Param): SQL {
  return sql`(${author} = ${viewer} or (${notSuspended(author)} and ${unblocked(viewer, author)}))`
}

/** The author of what `viewer` is shown, joined as `users`: not suspended (unless it is the viewer) and not blocked either way. */
export function authorVisibleTo(viewer: Param): SQL {
  return sql`(("users"."suspended_at" is null or "users"."id" = ${viewer}) and ${unblocked(viewer, sql`"users"."id"`)})`
}

/** The target of a block or a mute: any existing user but oneself (a 400). */
async function target(reads: ReadDb, actorId: number, ref: number | string, verb: 'block' | 'mute') {
  const user = await findUser(reads, ref)
  if (user.id === actorId) throw new TRPCError({ code: 'BAD_REQUEST', message: `You cannot ${verb} yourself` })
  return user
}

export interface BlockState {
  user_id: number
  is_blocked: boolean
}

export interface MuteState {
  user_id: number
  is_muted: boolean
}

/**
 * Blocks `ref` (idempotent). In the block's transaction, and only when the block is new: the
 * follows and follow requests both ways go (counters and timelines as an unfollow does) and so do
 * the notifications each caused the other. One may block a user who has blocked them.
 */
export async function blockUser(db: Db, reads: ReadDb, blockerId: number, ref: number | string, now: Date): Promise<BlockState> {
  const other = await target(reads, blockerId, ref, 'block')
  await writeTransaction(db, async (tx) => {
    const inserted = await tx.run(sql`
      insert into ${blocks} (blocker_id, blocked_id, created_at) values (${blockerId}, ${other.id}, ${now.getTime()})
      on conflict do nothing`)
    if (inserted.rowsAffected === 0) return
    await removeFollow(tx, blockerId, other.id)
    await removeFollow(tx, other.id, blockerId)
    await takeFollowRequest(tx, blockerId, other.id)
    await takeFollowRequest(tx, other.id, blockerId)
    await tx.run(sql`
      delete from notifications where (user_id = ${blockerId} and actor_id = ${other.id}) or (user_id = ${other.id} and actor_id = ${blockerId})`)
  })
  return { user_id: other.id, is_blocked: true }
}

/** Lifts the caller's block of `ref` (idempotent); follows it removed stay removed. */
export async function unblockUser(db: Db, reads: ReadDb, blockerId: number, ref: number | string): Promise<BlockState> {
  const other = await target(reads, blockerId, ref, 'block')
  await db.run(sql`delete from ${blocks} where blocker_id = ${blockerId} and blocked_id = ${other.id}`)
  return { user_id: other.id, is_blocked: false }
}

/** Mutes `ref` (idempotent): when new, its posts leave the muter's timeline in the same transaction. */
export async function muteUser(db: Db, reads: ReadDb, muterId: number, ref: number | string, now: Date): Promise<MuteState> {
  const other = await target(reads, muterId, ref, 'mute')
  await writeTransaction(db, async (tx) => {
    const inserted = await tx.run(sql`
      insert into ${mutes} (muter_id, muted_id, created_at) values (${muterId}, ${other.id}, ${now.getTime()})
      on conflict do nothing`)
    if (inserted.rowsAffected > 0) await pruneTimeline(tx, muterId, other.id)
  })
  return { user_id: other.id, is_muted: true }
}

/** Unmutes `ref` (idempotent): when a mute went and the caller still follows them, their posts are backfilled as on a follow. */
export async function unmuteUser(db: Db, reads: ReadDb, muterId: number, ref: number | string): Promise<MuteState> {
  const other = await target(reads, muterId, ref, 'mute')
  await writeTransaction(db, async (tx) => {
    const deleted = await tx.run(sql`delete from ${mutes} where muter_id = ${muterId} and muted_id = ${other.id}`)
    if (deleted.rowsAffected === 0) return
    const follows = await tx.values(sql`select 1 from follows where follower_id = ${muterId} and following_id = ${other.id}`)
    if (follows.length > 0) await backfillTimeline(tx, muterId, other.id)
  })
  return { user_id: other.id, is_muted: false }
}

/** The two lists: whom the owner blocked or muted, each served by its (owner, created_at) index, which carries the other id for ties. */
const RELATIONS = {
  blocked: { table: blocks, owner: blocks.blockerId, other: blocks.blockedId, at: blocks.createdAt },
  muted: { table: mutes, owner: mutes.muterId, other: mutes.mutedId, at: mutes.createdAt },
} as const

/** Whom `owner` blocked or muted, most recent first (`blocks_blocker_created_idx`, `mutes_muter_created_idx`); values or placeholders. */
export function relationPageQuery(db: ReadDb, which: keyof typeof RELATIONS, owner: Param, limit: number | Placeholder, offset: number | Placeholder) {
  const { table, owner: ownerColumn, other, at } = RELATIONS[which]
  return db
    .select(userSummaryColumns(owner as number | Placeholder))
    .from(table)
    .innerJoin(users, eq(users.id, other))
    .where(eq(ownerColumn, owner))
    .orderBy(desc(at), desc(other))
    .limit(limit)
    .offset(offset)
}

const relationPage = (which: keyof typeof RELATIONS) =>
  prepared((db) => relationPageQuery(db, which, sql.placeholder('owner'), sql.placeholder('limit'), sql.placeholder('offset')).prepare())
const relationPages = { blocked: relationPage('blocked'), muted: relationPage('muted') }

/** A page of the caller's blocked or muted accounts (only the caller ever sees these lists). */
export async function listRelations(
  dbs: { reads: ReadDb; scans: ReadDb },
  which: 'blocked' | 'muted',
  ownerId: number,
  paging: Paging,
): Promise<{ users: UserSummary[]; page: number; has_more: boolean }> {
  const query = relationPages[which](readerForPage(dbs, paging))
  const rows = await query.all({ owner: ownerId, limit: paging.limit + 1, offset: (paging.page - 1) * paging.limit })
  return { users: await withMedia(dbs.reads, rows.slice(0, paging.limit).map(toUserSummary)), page: paging.page, has_more: rows.length > paging.limit }
}
