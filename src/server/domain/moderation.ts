/**
 * The operator's side of reports: listing them, resolving them (dismiss, remove, suspend),
 * suspending and unsuspending users directly, and the moderation record. Every action writes one
 * `moderation_actions` row in the transaction that makes its change (for `remove`, the deletion's
 * own: see removeTarget). Served by the `plaza admin` commands on the data directory; no API
 * exposes them.
 */
import { TRPCError } from '@trpc/server'
import { sql, type SQL } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { ModerationActionKind, ModerationBy, ReportResolution, ReportTargetType } from '../../shared/schemas/reports.js'
import type { ModerationAction, ReportEntry } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import type { Services } from '../services.js'
import { causedBy, notificationsCausedBy, type CausedBy } from './notifications.js'
import { deleteComment, deletePost, deleteStory, type WithinRemoval } from './removal.js'
import { findUser } from './users.js'

/** How much of the reported text a listing shows. */
const EXCERPT_LENGTH = 80

type ReportRow = [number, ReportTargetType, number, number, string, string | null, number, string, string, string, 'open' | 'resolved', ReportEntry['resolution'], number, number | null]

/**
 * The columns of a ReportEntry. The excerpt is a primary-key probe of the target's table inside
 * the same query (one query for the whole list, never one per report); null once the target is gone.
 */
const reportSelect = sql`
  select r.id, r.target_type, r.target_id, r.target_user_id, tu.username,
    case r.target_type
      when 'post' then (select case when p.content <> '' then p.content else '[image]' end from posts p where p.id = r.target_id)
      when 'comment' then (select case when c.content <> '' then c.content else '[image]' end from comments c where c.id = r.target_id)
      when 'story' then (select coalesce(s.text_content, '[' || s.content_type || ' story]') from stories s where s.id = r.target_id)
      else '@' || tu.username
    end,
    r.reporter_id, ru.username, r.reason, r.note, r.status, r.resolution, r.created_at, r.resolved_at
  from reports r
  join users tu on tu.id = r.target_user_id
  join users ru on ru.id = r.reporter_id`

function excerptOf(text: string | null): string | null {
  if (text === null) return null
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH - 1)}…` : flat
}

// Raw rows are read by index: the local client's rows index like arrays but do not destructure.
function toReportEntry(row: ReportRow): ReportEntry {
  return {
    id: row[0],
    target_type: row[1],
    target_id: row[2],
    target_user_id: row[3],
    target_username: row[4],
    excerpt: excerptOf(row[5]),
    reporter_id: row[6],
    reporter_username: row[7],
    reason: row[8],
    note: row[9],
    status: row[10],
    resolution: row[11],
    created_at: formatDateTime(row[12]),
    resolved_at: row[13] === null ? null : formatDateTime(row[13]),
  }
}

/** The reports list's query (exported for its query-plan test): newest first, open ones only on `reports_status_idx` (status, id), all of them on the primary key. */
export function reportsQuery(options: { open: boolean; limit: number }): SQL {
  const where = options.open ? sql` where r.status = 'open'` : sql``
  return sql`${reportSelect}${where} order by r.id desc limit ${options.limit}`
}

/** Reports, newest first (only open ones with `open`). */
export async function listReports(db: Db | ReadDb, options: { open: boolean; limit: number }): Promise<ReportEntry[]> {
  return (await db.values<ReportRow>(reportsQuery(options))).map(toReportEntry)
}

async function loadReport(db: Db | Tx, reportId: number): Promise<ReportEntry | null> {
  const [row] = await db.values<ReportRow>(sql`${reportSelect} where r.id = ${reportId}`)
  return row ? toReportEntry(row) : null
}

type ActionRow = [number, string, ModerationActionKind, number | null, ReportTargetType, number, string | null, string, number]

const actionSelect = sql`
  select a.id, a.moderator, a.action, a.report_id, a.target_type, a.target_id, u.username, a.note, a.created_at
  from moderation_actions a left join users u on a.target_type = 'user' and u.id = a.target_id`

function toModerationAction(row: ActionRow): ModerationAction {
  return {
    id: row[0],
    moderator: row[1],
    action: row[2],
    report_id: row[3],
    target_type: row[4],
    target_id: row[5],
    target_username: row[6],
    note: row[7],
    created_at: formatDateTime(row[8]),
  }
}

/** The moderation record's query (exported for its query-plan test): newest first on `moderation_actions_created_idx` (its entries end with the id). */
export function actionsQuery(limit: number): SQL {
  return sql`${actionSelect} order by a.created_at desc, a.id desc limit ${limit}`
}

/** The moderation record, newest first. */
export async function listActions(db: Db | ReadDb, limit: number): Promise<ModerationAction[]> {
  return (await db.values<ActionRow>(actionsQuery(limit))).map(toModerationAction)
}

interface ActionRecord {
  action: ModerationActionKind
  reportId: number | null
  targetType: ReportTargetType
  targetId: number
}

/** Writes one row of the moderation record (in the caller's transaction) and answers it. */
async function recordAction(tx: Tx, record: ActionRecord, by: ModerationBy, now: number): Promise<ModerationAction> {
  const [row] = await tx.values<[number]>(sql`
    insert into moderation_actions (moderator, action, report_id, target_type, target_id, note, created_at)
    values (${by.moderator}, ${record.action}, ${record.reportId}, ${record.targetType}, ${record.targetId}, ${by.note}, ${now})
    returning id`)
  const [action] = await tx.values<ActionRow>(sql`${actionSelect} where a.id = ${row[0]}`)
  return toModerationAction(action)
}

/** Marks open reports resolved with `resolution`; answers their ids. */
async function resolveOpen(tx: Tx, where: SQL, resolution: ReportResolution, now: number): Promise<number[]> {
  const rows = await tx.values<[number]>(sql`
    update reports set status = 'resolved', resolution = ${resolution}, resolved_at = ${now}
    where status = 'open' and (${where}) returning id`)
  return rows.map((row) => row[0]).sort((a, b) => a - b)
}

export interface Resolution {
  /** The report, as resolved. */
  report: ReportEntry
  action: ModerationAction
  /** The other open reports this action resolved with it (same target for remove, same user for suspend). */
  also_resolved: number[]
}

const REMOVERS = { post: deletePost, comment: deleteComment, story: deleteStory } as const

/**
 * Deletes the reported content for everyone (removal.ts, as a moderator: no ownership rules) and
 * runs `settle` (resolve and record) in the deletion's transaction, given the ids of the comments
 * that went with a post; the files go after commit. Content already gone (its author deleted it,
 * or a moderator's deletion outside resolveReport) counts as removed: `settle` then runs in a
 * transaction of its own, with no comments.
 */
async function removeTarget<T>(services: Services, report: ReportEntry, moderator: string, settle: (tx: Tx, comments: number[]) => Promise<T>): Promise<T> {
  if (report.target_type === 'user') {
    throw new TRPCError({ code: 'BAD_REQUEST', message: `report ${report.id} is about a user: use --action suspend` })
  }
  // An object, not a `let`: TypeScript does not see the assignments made in the callback.
  const settled: { ran: boolean; value?: T } = { ran: false }
  const within: WithinRemoval = async (tx, removed) => {
    settled.ran = true
    settled.value = await settle(tx, removed.comments)
  }
  try {
    await REMOVERS[report.target_type](services, report.target_id, { moderator }, within)
  } catch (error) {
    // Only the deletion's own 404, before `settle` ran, means the content is already gone.
    if (settled.ran || !(error instanceof TRPCError && error.code === 'NOT_FOUND')) throw error
    return writeTransaction(services.db, (tx) => settle(tx, []))
  }
  return settled.value as T
}

/**
 * Resolves an open report. `dismiss` only resolves it. `remove` deletes the reported content for
 * everyone and resolves every open report about the same target; `suspend` suspends the user the
 * report is about and resolves every open report about that user. One `moderation_actions` row
 * records it, in the transaction that resolves the reports and makes the change (deletes the
 * content, or suspends the user): a failure anywhere leaves all of it undone.
 * 404 for an unknown report, 409 for one already resolved, 400 for `remove` on a user report.
 */
export async function resolveReport(services: Services, reportId: number, resolution: ReportResolution, by: ModerationBy): Promise<Resolution> {
  const report = await loadReport(services.db, reportId)
  if (!report) throw new TRPCError({ code: 'NOT_FOUND', message: `no report with id ${reportId}` })
  if (report.status !== 'open') throw new TRPCError({ code: 'CONFLICT', message: `report ${reportId} is already resolved (${report.resolution})` })

  const now = services.clock().getTime()
  // A suspension marks the notifications the account caused read: found before the transaction.
  const caused = resolution === 'suspend' ? await notificationsCausedBy(services.scans, report.target_user_id, true) : null
  // For remove, runs in removal.ts's transaction, after the deletion (see removeTarget).
  const settle = async (tx: Tx, removedComments: number[]) => {
    const self = sql`id = ${reportId}`
    let others: SQL | null = null
    let record: ActionRecord = { action: resolution, reportId, targetType: report.target_type, targetId: report.target_id }
    if (resolution === 'remove') {
      others = sql`target_type = ${report.target_type} and target_id = ${report.target_id}`
      if (removedComments.length > 0) {
        others = sql`(${others}) or (target_type = 'comment' and target_id in (select value from json_each(${JSON.stringify(removedComments)})))`
      }
    } else if (resolution === 'suspend') {
      others = sql`target_user_id = ${report.target_user_id}`
      // An already suspended user keeps the instant of the first suspension.
      if ((await tx.run(sql`update users set suspended_at = ${now} where id = ${report.target_user_id} and suspended_at is null`)).rowsAffected > 0) {
        await readNotificationsCausedBy(tx, caused!)
      }
      record = { action: 'suspend', reportId, targetType: 'user', targetId: report.target_user_id }
    }
    const ids = await resolveOpen(tx, others ? sql`${self} or ${others}` : self, resolution, now)
    if (!ids.includes(reportId) && resolution === 'dismiss') {
      // Resolved by someone else since it was read: nothing was done, so nothing is recorded.
      throw new TRPCError({ code: 'CONFLICT', message: `report ${reportId} is already resolved` })
    }
    const action = await recordAction(tx, record, by, now)
    return { action, also: ids.filter((id) => id !== reportId) }
  }
  const resolved =
    resolution === 'remove' ? await removeTarget(services, report, by.moderator, settle) : await writeTransaction(services.db, (tx) => settle(tx, []))
  return { report: (await loadReport(services.db, reportId))!, action: resolved.action, also_resolved: resolved.also }
}

/**
 * A suspended account's notifications to others are hidden from their lists (relations.ts); they
 * are marked read too, so the unread count (the recipients' counters, without an actor test)
 * agrees with the list. `caused` is what notificationsCausedBy found before the transaction.
 */
async function readNotificationsCausedBy(tx: Tx, caused: CausedBy): Promise<void> {
  await tx.run(sql`update notifications set is_read = 1 where ${causedBy(caused)} and is_read = 0`)
}

/** The write client and the scan workers (which find a suspended account's notifications). */
type Databases = Pick<Services, 'db' | 'scans'>

export interface SuspensionChange {
  user: { id: number; username: string; suspended_at: string | null }
  action: ModerationAction
}

/** Sets or clears `users.suspended_at` directly (no report) and records it; 404 for no such user, 409 when nothing would change. */
async function changeSuspension(dbs: Databases, ref: number | string, suspend: boolean, by: ModerationBy, now: Date): Promise<SuspensionChange> {
  const { db } = dbs
  const user = await findUser(db, ref).catch((error: unknown) => {
    throw error instanceof TRPCError && error.code === 'NOT_FOUND' ? new TRPCError({ code: 'NOT_FOUND', message: `no user ${typeof ref === 'number' ? `with id ${ref}` : `named "${ref}"`}` }) : error
  })
  const at = now.getTime()
  const caused = suspend ? await notificationsCausedBy(dbs.scans, user.id, true) : null
  return writeTransaction(db, async (tx) => {
    const changed = suspend
      ? await tx.values<[number | null]>(sql`update users set suspended_at = ${at} where id = ${user.id} and suspended_at is null returning suspended_at`)
      : await tx.values<[number | null]>(sql`update users set suspended_at = null where id = ${user.id} and suspended_at is not null returning suspended_at`)
    if (changed.length === 0) throw new TRPCError({ code: 'CONFLICT', message: `${user.username} is ${suspend ? 'already' : 'not'} suspended` })
    if (caused) await readNotificationsCausedBy(tx, caused)
    const action = await recordAction(tx, { action: suspend ? 'suspend' : 'unsuspend', reportId: null, targetType: 'user', targetId: user.id }, by, at)
    const suspendedAt = changed[0][0]
    return { user: { id: user.id, username: user.username, suspended_at: suspendedAt === null ? null : formatDateTime(suspendedAt) }, action }
  })
}

/**
 * Suspends a user without a report: they can no longer log in or use their sessions (403), which
 * are kept so that unsuspending restores them. Open reports about them stay open.
 */
export function suspendUser(dbs: Databases, ref: number | string, by: ModerationBy, now: Date): Promise<SuspensionChange> {
  return changeSuspension(dbs, ref, true, by, now)
}

/** Lifts a suspension: login and the user's existing sessions work again. */
export function unsuspendUser(dbs: Databases, ref: number | string, by: ModerationBy, now: Date): Promise<SuspensionChange> {
  return changeSuspension(dbs, ref, false, by, now)
}
