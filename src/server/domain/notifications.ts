import { TRPCError } from '@trpc/server'
import { and, asc, count, desc, eq, gt, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Notification, NotificationType } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { notifications, posts, users } from '../db/schema.js'
import { withMedia } from './media.js'
import { readerForPage } from './page-depth.js'
import { authorVisibleTo, unblocked } from './relations.js'
import { toNotification } from './views.js'

export interface NotificationEvent {
  /** Who is told. */
  userId: number
  /** Who acted. */
  actorId: number
  type: NotificationType
  postId?: number | null
  storyId?: number | null
}

/**
 * Records a notification in the caller's transaction; nobody is notified of their own actions, nor
 * by someone they blocked or who blocked them (the actions that notify already refuse a blocked
 * pair; this keeps it so for any new one). A lean `sql` insert: it runs under the write lock of
 * every like, comment and follow.
 */
export async function notify(db: Db | Tx, event: NotificationEvent, now: Date): Promise<void> {
  if (event.userId === event.actorId) return
  await db.run(sql`
    insert into notifications (user_id, actor_id, type, post_id, story_id, created_at)
    select ${event.userId}, ${event.actorId}, ${event.type}, ${event.postId ?? null}, ${event.storyId ?? null}, ${now.getTime()}
    where ${unblocked(event.userId, event.actorId)}`)
}

/**
 * `is_read = 0` is written as a literal, the very text of the partial index's WHERE, so the planner
 * can pick `notifications_user_unread_idx` without depending on a bound value.
 */
const unread: SQL = sql`${notifications.isRead} = 0`

/** Whose notifications a query may touch: always the caller's own, optionally only the unread ones. */
function ownedBy(userId: number | Placeholder, unreadOnly: boolean): SQL {
  return unreadOnly ? and(eq(notifications.userId, userId), unread)! : eq(notifications.userId, userId)
}

type Param = number | Placeholder

/**
 * One page of the caller's notifications with its actor and post joined; values or placeholders.
 * With `after`, those past that id, oldest first (the live stream's catch-up), through the same joins and filters.
 */
function notificationSelect(db: ReadDb, userId: Param, unreadOnly: boolean, limit: Param, offset: Param, after?: Param) {
  return db
    .select({
      id: notifications.id,
      type: notifications.type,
      isRead: notifications.isRead,
      createdAt: notifications.createdAt,
      actorId: notifications.actorId,
      actorUsername: users.username,
      actorFullName: users.fullName,
      actorAvatar: users.avatar,
      actorIsVerified: users.isVerified,
      postId: notifications.postId,
      postContent: posts.content,
      postImage: posts.image,
      storyId: notifications.storyId,
    })
    .from(notifications)
    .innerJoin(users, eq(users.id, notifications.actorId))
    .leftJoin(posts, eq(posts.id, notifications.postId))
    .where(and(ownedBy(userId, unreadOnly), authorVisibleTo(userId), after === undefined ? undefined : gt(notifications.id, after)))
    .orderBy(after === undefined ? desc(notifications.id) : asc(notifications.id))
    .limit(limit)
    .offset(offset)
}

/**
 * The caller's notifications, newest first (by id, which grows with time), one page, in one query
 * with its actor and post joined. Served by `notifications_user_id_idx` (user_id, id), or by the
 * partial `notifications_user_unread_idx` with `unreadOnly`. One extra row tells whether another
 * page exists without a count query.
 */
export function notificationListQuery(db: ReadDb, userId: number, options: { page: number; limit: number; unreadOnly: boolean }) {
  const { page, limit, unreadOnly } = options
  return notificationSelect(db, userId, unreadOnly, limit + 1, (page - 1) * limit)
}

const pagePlaceholders = [sql.placeholder('limit'), sql.placeholder('offset')] as const
const allPage = prepared((db) => notificationSelect(db, sql.placeholder('user'), false, ...pagePlaceholders).prepare())
const unreadPage = prepared((db) => notificationSelect(db, sql.placeholder('user'), true, ...pagePlaceholders).prepare())

/**
 * A page of the caller's notifications. Prepared; the first pages are read inline (`reads`), deep
 * ones by the `scans` workers (page-depth.ts).
 */
export async function listNotifications(
  dbs: { reads: ReadDb; scans: ReadDb },
  userId: number,
  options: { page: number; limit: number; unreadOnly: boolean },
): Promise<{ notifications: Notification[]; page: number; has_more: boolean }> {
  const { page, limit, unreadOnly } = options
  const query = (unreadOnly ? unreadPage : allPage)(readerForPage(dbs, options))
  const rows = await query.all({ user: userId, limit: limit + 1, offset: (page - 1) * limit })
  return { notifications: await withMedia(dbs.reads, rows.slice(0, limit).map(toNotification)), page, has_more: rows.length > limit }
}

const afterPage = prepared((db) => notificationSelect(db, sql.placeholder('user'), false, sql.placeholder('limit'), 0, sql.placeholder('after')).prepare())

/**
 * The caller's notifications with an id past `afterId`, oldest first, at most `limit`: in the list's
 * shape, so the live stream (notification-feed.ts) shows what the list shows. One range of
 * `notifications_user_page_idx` (user_id, id).
 */
export async function notificationsAfter(db: ReadDb, userId: number, afterId: number, limit: number): Promise<Notification[]> {
  const rows = await afterPage(db).all({ user: userId, after: afterId, limit })
  return withMedia(db, rows.map(toNotification))
}

/** How many of the caller's notifications are unread (served by the partial unread index). */
export function unreadCountQuery(db: ReadDb, userId: Param) {
  // No actor test, so the partial unread index answers alone: a block deletes the notifications
  // between the two, and a suspension marks those its account caused read (moderation).
  return db.select({ count: count() }).from(notifications).where(ownedBy(userId, true))
}

const unreadCount = prepared((db) => unreadCountQuery(db, sql.placeholder('user')).prepare())

/** The unread badge: polled by clients, so a prepared query. */
export async function countUnread(db: ReadDb, userId: number): Promise<{ count: number }> {
  const row = await unreadCount(db).get({ user: userId })
  return { count: row!.count }
}

/**
 * Marks one of the caller's notifications read, or all of them without an id; answers how many
 * changed (0 for one that was already read). Someone else's or a missing id is a 404, so ids of
 * other users' notifications cannot be probed. Lean `sql` statements, as they hold the write lock.
 */
export async function markRead(db: Db, userId: number, notificationId?: number): Promise<{ updated: number }> {
  return writeTransaction(db, async (tx) => {
    // `is_read = 0` as a literal, for the partial unread index (see `unread`).
    const ofOne = notificationId === undefined ? sql`` : sql` and id = ${notificationId}`
    const result = await tx.run(sql`update notifications set is_read = 1 where user_id = ${userId} and is_read = 0${ofOne}`)
    if (notificationId === undefined || result.rowsAffected > 0) return { updated: result.rowsAffected }
    const own = await tx.values(sql`select 1 from notifications where id = ${notificationId} and user_id = ${userId}`)
    if (own.length === 0) throw new TRPCError({ code: 'NOT_FOUND', message: 'Notification not found' })
    return { updated: 0 }
  })
}
