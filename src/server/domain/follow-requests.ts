/**
 * Follow requests to private accounts (docs/social.md, Private accounts). A follow of a private
 * account records a request (follows.ts requestFollow) and notifies the owner with
 * `follow_request`; the owner lists the requests, approves one (it becomes a follow, made as any
 * follow is: counters, the owner's `follow` notification, the timeline's backfill) or denies it
 * (it goes). Turning the account public approves every pending request in the same transaction.
 */
import { TRPCError } from '@trpc/server'
import { and, desc, eq, sql, type Placeholder } from 'drizzle-orm'
import type { UserSummary } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { followRequests, follows, notifications, timelineBackfills, users } from '../db/schema.js'
import type { Fanout } from './fanout.js'
import { addFollow, takeFollowRequest } from './follows.js'
import { withMedia } from './media.js'
import { readerForPage } from './page-depth.js'
import type { Paging } from './posts.js'
import { authorVisibleTo, unblocked } from './relations.js'
import { findVisibleUser, toUserSummary, userSummaryColumns } from './users.js'

export interface FollowRequestResult {
  user_id: number
  state: 'approved' | 'denied'
}

type Param = number | Placeholder

/**
 * Who asked to follow `ownerId`, newest first (`follow_requests_target_created_idx`, which carries
 * the requester's id for ties: no sort); values or placeholders. A requester a block or a
 * suspension hides is left out (a block deletes the requests between the two anyway).
 */
export function followRequestsQuery(db: ReadDb, ownerId: Param, limit: Param, offset: Param) {
  return db
    .select(userSummaryColumns(ownerId))
    .from(followRequests)
    .innerJoin(users, eq(users.id, followRequests.requesterId))
    .where(and(eq(followRequests.targetId, ownerId), authorVisibleTo(ownerId)))
    .orderBy(desc(followRequests.createdAt), desc(followRequests.requesterId))
    .limit(limit)
    .offset(offset)
}

const requestsPage = prepared((db) => followRequestsQuery(db, sql.placeholder('owner'), sql.placeholder('limit'), sql.placeholder('offset')).prepare())

/** A page of the requests to follow the caller (only the owner ever sees them). */
export async function listFollowRequests(
  dbs: { reads: ReadDb; scans: ReadDb },
  ownerId: number,
  paging: Paging,
): Promise<{ users: UserSummary[]; page: number; has_more: boolean }> {
  const rows = await requestsPage(readerForPage(dbs, paging)).all({ owner: ownerId, limit: paging.limit + 1, offset: (paging.page - 1) * paging.limit })
  return { users: await withMedia(dbs.reads, rows.slice(0, paging.limit).map(toUserSummary)), page: paging.page, has_more: rows.length > paging.limit }
}

const noRequest = () => new TRPCError({ code: 'NOT_FOUND', message: 'Follow request not found' })

/**
 * Approves `ref`'s request to follow the caller: the request and its notification go and the
 * follow is made as any follow is (follows.ts addFollow), in one transaction. 404 when there is no
 * such request, or the requester is hidden from the caller (a block deleted it; a suspension).
 */
export async function approveFollowRequest(db: Db, reads: ReadDb, fanout: Pick<Fanout, 'notify'>, ownerId: number, ref: number | string, now: Date): Promise<FollowRequestResult> {
  const requester = await findVisibleUser(reads, ref, ownerId)
  const followed = await writeTransaction(db, async (tx) => {
    if (!(await takeFollowRequest(tx, requester.id, ownerId))) throw noRequest()
    return (await addFollow(tx, requester.id, ownerId, now)) !== null
  })
  if (followed) fanout.notify()
  return { user_id: requester.id, state: 'approved' }
}

/** Denies `ref`'s request to follow the caller: it goes, with its notification; the requester is not told. 404 as for approving. */
export async function denyFollowRequest(db: Db, reads: ReadDb, ownerId: number, ref: number | string): Promise<FollowRequestResult> {
  const requester = await findVisibleUser(reads, ref, ownerId)
  await writeTransaction(db, async (tx) => {
    if (!(await takeFollowRequest(tx, requester.id, ownerId))) throw noRequest()
  })
  return { user_id: requester.id, state: 'denied' }
}

/**
 * Approves every pending request to follow `ownerId`, in the caller's transaction (an account
 * turning public): one statement per step whatever their number. Each becomes a follow as approving
 * it would make it (both counters, the owner's `follow` notification, the requester's pending
 * backfill), unless a block stands between the two; the requests and their notifications go.
 * Answers how many follows were made (the caller then tells the fan-out runner).
 */
export async function approveAllFollowRequests(tx: Tx, ownerId: number, now: Date): Promise<number> {
  const at = now.getTime()
  const made = await tx.values<[number]>(sql`
    insert into ${follows} (follower_id, following_id, created_at)
    select requester_id, target_id, ${at} from ${followRequests}
    where target_id = ${ownerId} and ${unblocked(sql`requester_id`, ownerId)}
    on conflict do nothing returning follower_id`)
  await tx.run(sql`delete from ${notifications} where id in (select notification_id from ${followRequests} where target_id = ${ownerId})`)
  await tx.run(sql`delete from ${followRequests} where target_id = ${ownerId}`)
  if (made.length === 0) return 0
  const ids = JSON.stringify(made.map((row) => row[0]))
  const requesters = sql`(select value from json_each(${ids}))`
  await tx.run(sql`update ${users} set followers_count = followers_count + ${made.length} where id = ${ownerId}`)
  await tx.run(sql`update ${users} set following_count = following_count + 1 where id in ${requesters}`)
  await tx.run(sql`
    insert into ${notifications} (user_id, actor_id, type, created_at) select ${ownerId}, value, 'follow', ${at} from json_each(${ids})`)
  await tx.run(sql`
    insert into ${timelineBackfills} (follower_id, followee_id) select value, ${ownerId} from json_each(${ids}) where true on conflict do nothing`)
  return made.length
}
