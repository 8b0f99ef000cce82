import { TRPCError } from '@trpc/server'
import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm'
import type { Notification, NotificationType } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { notifications, posts, users } from '../db/schema.js'
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
 * Records a notification in the caller's transaction; nobody is notified of their own actions.
 */
export async function notify(db: Db | Tx, event: NotificationEvent, now: Date): Promise<void> {
  if (event.userId === event.actorId) return
  await db.insert(notifications).values({
    userId: event.userId,
    actorId: event.actorId,
    type: event.type,
    postId: event.postId ?? null,
    storyId: event.storyId ?? null,
    createdAt: now.getTime(),
  })
}

/**
 * `is_read = 0` is written as a literal, the very text of the partial index's WHERE, so the planner
 * can pick `notifications_user_unread_idx` without depending on a bound value.
 */
const unread: SQL = sql`${notifications.isRead} = 0`

/** Whose notifications a query may touch: always the caller's own, optionally only the unread ones. */
function ownedBy(userId: number, unreadOnly: boolean): SQL {
  return unreadOnly ? and(eq(notifications.userId, userId), unread)! : eq(notifications.userId, userId)
}

/**
 * The caller's notifications, newest first (by id, which grows with time), one page, in one query
 * with its actor and post joined. Served by `notifications_user_id_idx` (user_id, id), or by the
 * partial `notifications_user_unread_idx` with `unreadOnly`.
 */
export function notificationListQuery(db: ReadDb, userId: number, options: { page: number; limit: number; unreadOnly: boolean }) {
  const { page, limit, unreadOnly } = options
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
    .where(ownedBy(userId, unreadOnly))
    .orderBy(desc(notifications.id))
    // One extra row tells whether another page exists without a count query.
    .limit(limit + 1)
    .offset((page - 1) * limit)
}

export async function listNotifications(
  db: ReadDb,
  userId: number,
  options: { page: number; limit: number; unreadOnly: boolean },
): Promise<{ notifications: Notification[]; page: number; has_more: boolean }> {
  const rows = await notificationListQuery(db, userId, options)
  return { notifications: rows.slice(0, options.limit).map(toNotification), page: options.page, has_more: rows.length > options.limit }
}

/** How many of the caller's notifications are unread (served by the partial unread index). */
export function unreadCountQuery(db: ReadDb, userId: number) {
  return db.select({ count: count() }).from(notifications).where(ownedBy(userId, true))
}

export async function countUnread(db: ReadDb, userId: number): Promise<{ count: number }> {
  const [row] = await unreadCountQuery(db, userId)
  return { count: row.count }
}

/**
 * Marks one of the caller's notifications read, or all of them without an id; answers how many
 * changed (0 for one that was already read). Someone else's or a missing id is a 404, so ids of
 * other users' notifications cannot be probed.
 */
export async function markRead(db: Db, userId: number, notificationId?: number): Promise<{ updated: number }> {
  return writeTransaction(db, async (tx) => {
    if (notificationId === undefined) {
      const result = await tx.update(notifications).set({ isRead: true }).where(ownedBy(userId, true))
      return { updated: result.rowsAffected }
    }
    const result = await tx
      .update(notifications)
      .set({ isRead: true })
      .where(and(eq(notifications.id, notificationId), ownedBy(userId, true)))
    if (result.rowsAffected > 0) return { updated: result.rowsAffected }
    const [own] = await tx
      .select({ id: notifications.id })
      .from(notifications)
      .where(and(eq(notifications.id, notificationId), eq(notifications.userId, userId)))
      .limit(1)
    if (!own) throw new TRPCError({ code: 'NOT_FOUND', message: 'Notification not found' })
    return { updated: 0 }
  })
}
