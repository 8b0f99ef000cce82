import { TRPCError } from '@trpc/server'
import { and, asc, desc, eq, gt, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import type { Notification, NotificationType } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { leanStatement, prepared } from '../db/prepared.js'
import { notifications, posts, users } from '../db/schema.js'
import { mediaInfo } from './media.js'
import { readerForPage } from './page-depth.js'
import { authorVisibleTo, unblocked } from './relations.js'
import { toNotificationWithMedia, type NotificationRow } from './views.js'

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
 * pair; this keeps it so for any new one). A lean statement rendered once (leanStatement): it
 * runs under the write lock of every like, comment and follow.
 */
export async function notify(db: Db | Tx, event: NotificationEvent, now: Date): Promise<void> {
  if (event.userId === event.actorId) return
  await db.run(
    notifyStatement({ user: event.userId, actor: event.actorId, type: event.type, post: event.postId ?? null, story: event.storyId ?? null, at: now.getTime() }),
  )
}

const notifyStatement = leanStatement(
  ['user', 'actor', 'type', 'post', 'story', 'at'],
  (v) => sql`
    insert into notifications (user_id, actor_id, type, post_id, story_id, created_at)
    select ${v.user}, ${v.actor}, ${v.type}, ${v.post}, ${v.story}, ${v.at}
    where ${unblocked(v.user, v.actor)}`,
)

/**
 * The leaves a notification of `userId` (about `postId`) goes into, as lookups for a warming read
 * (db/warm.ts): the end of the recipient's range in notifications_user_page_idx and of the post's
 * in notifications_post_idx, and the recipient's row of `users`, whose unread count the insert
 * trigger raises. The rows themselves go at the table's end, which is always in memory; the actor
 * is in no index (migration 0017).
 */
export function notificationPages(userId: SQL | Placeholder, postId?: Placeholder): SQL[] {
  const pages = [
    sql`select max(id) from ${notifications} indexed by notifications_user_page_idx where user_id = ${userId}`,
    sql`select notifications_unread from ${users} where id = ${userId}`,
  ]
  if (postId !== undefined) pages.push(sql`select max(id) from ${notifications} indexed by notifications_post_idx where post_id = ${postId}`)
  return pages
}

/**
 * The notifications an account caused, as a scan found them: their ids, and the newest id in the
 * table when it ran (`upto`).
 */
export interface CausedBy {
  actorId: number
  ids: number[]
  upto: number
}

/**
 * Finds the notifications `actorId` caused (only the unread ones with `unreadOnly`) for an account's
 * deletion or suspension. The actor is in no index (migration 0017: one would be written with every
 * like, comment and follow), so this scans the table, on a scan worker (`scans`): off the event
 * loop, and before the write transaction, so no writer waits for it. The ids and the table's newest
 * id come from one statement, so one snapshot; the transaction then acts on `causedBy(found)`,
 * which adds those written since (ids past `upto`: ids only grow) and checks the actor again.
 */
export async function notificationsCausedBy(scans: ReadDb, actorId: number, unreadOnly = false): Promise<CausedBy> {
  const unread = unreadOnly ? sql` and is_read = 0` : sql``
  const [row] = await scans.values<[string, number | null]>(sql`
    select (select json_group_array(id) from notifications where actor_id = ${actorId}${unread}), (select max(id) from notifications)`)
  return { actorId, ids: JSON.parse(row[0]) as number[], upto: row[1] ?? 0 }
}

/**
 * Exactly the notifications of `found.actorId` as they are now, for a statement in the write
 * transaction: those the scan found (by primary key) and those written since (a range of it).
 */
export function causedBy(found: CausedBy): SQL {
  return sql`(id in (select value from json_each(${JSON.stringify(found.ids)})) or id > ${found.upto}) and actor_id = ${found.actorId}`
}

/**
 * The caller's unread notifications: those past their read-up-to mark (every one at or below it is
 * read, users.notifications_read_upto) that are not read, so they are one range of
 * notifications_user_page_idx (user_id, id > mark) filtered in the index, not the user's whole range.
 */
function unreadOf(userId: number | Placeholder | SQL): SQL {
  return sql`${notifications.id} > (select reader.notifications_read_upto from ${users} reader where reader.id = ${userId}) and ${notifications.isRead} = 0`
}

/** Whose notifications a query may touch: always the caller's own, optionally only the unread ones. */
function ownedBy(userId: number | Placeholder | SQL, unreadOnly: boolean): SQL {
  return unreadOnly ? and(eq(notifications.userId, userId), unreadOf(userId))! : eq(notifications.userId, userId)
}

type Param = number | Placeholder

/**
 * One page of the caller's notifications with its actor and post joined; values or placeholders.
 * With `after`, those past that id, oldest first (the live stream's catch-up), through the same joins and filters.
 */
function notificationSelect(db: ReadDb, userId: Param | SQL, unreadOnly: boolean, limit: Param, offset: Param, after?: Param, only?: SQL) {
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
    .where(and(ownedBy(userId, unreadOnly), authorVisibleTo(userId), after === undefined ? undefined : gt(notifications.id, after), only))
    .orderBy(after === undefined ? desc(notifications.id) : asc(notifications.id))
    .limit(limit)
    .offset(offset)
}

/**
 * The caller's notifications, newest first (by id, which grows with time), one page, in one query
 * with its actor and post joined. Served by `notifications_user_page_idx` (user_id, id, ...), with
 * `unreadOnly` only its range past the user's read-up-to mark. One extra row tells whether another
 * page exists without a count query.
 */
export function notificationListQuery(db: ReadDb, userId: number, options: { page: number; limit: number; unreadOnly: boolean }) {
  const { page, limit, unreadOnly } = options
  return notificationSelect(db, userId, unreadOnly, limit + 1, (page - 1) * limit)
}

/** A NotificationRow as the page query's JSON has it: notificationSelect's values in order, booleans as 0/1. */
type NotificationValues = [number, NotificationType, number, number, number, string, string, string, number, number | null, string | null, string | null, number | null]

/**
 * A page of notificationSelect as one JSON text (one row, one value; parseNotificationRows puts it
 * newest first, as an aggregate's own ORDER BY is SQLite 3.44 syntax libsql servers refuse): the
 * libsql binding hands rows over one value at a time, and drizzle then maps each, which for a
 * page of 21 took more than building and parsing the JSON does (as for posts, posts.ts
 * postRowsAsJson). The inner columns are named as SQLite names them (the column's own name).
 */
function notificationPageAsJson(db: ReadDb, unreadOnly: boolean) {
  // Built by a query builder of no database: only its SQL is used, inside the one query run on `db`.
  const page = notificationSelect(new QueryBuilder() as unknown as ReadDb, sql.placeholder('user'), unreadOnly, sql.placeholder('limit'), sql.placeholder('offset'))
  return db
    .select({
      rows: sql<string>`json_group_array(json_array(id, type, is_read, created_at, actor_id, username, full_name, avatar, is_verified, post_id, content, image, story_id))`,
    })
    .from(sql`(${page}) as page`)
}

/** The rows notificationPageAsJson wrote, newest first, as drizzle maps notificationSelect (a boolean column is `value === 1`). */
function parseNotificationRows(json: string): NotificationRow[] {
  return (JSON.parse(json) as NotificationValues[]).sort((a, b) => b[0] - a[0]).map((v) => ({
    id: v[0],
    type: v[1],
    isRead: v[2] === 1,
    createdAt: v[3],
    actorId: v[4],
    actorUsername: v[5],
    actorFullName: v[6],
    actorAvatar: v[7],
    actorIsVerified: v[8] === 1,
    postId: v[9],
    postContent: v[10],
    postImage: v[11],
    storyId: v[12],
  }))
}

/** Notifications for an answer: one media lookup for them all (media.ts), then toNotificationWithMedia. */
async function notificationsWithMedia(db: ReadDb, rows: readonly NotificationRow[]): Promise<Notification[]> {
  const media = await mediaInfo(db, rows.flatMap((row) => [row.actorAvatar, row.postImage ?? '']))
  return rows.map((row) => toNotificationWithMedia(row, media))
}

const allPage = prepared((db) => notificationPageAsJson(db, false).prepare())
const unreadPage = prepared((db) => notificationPageAsJson(db, true).prepare())

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
  const json = await query.get({ user: userId, limit: limit + 1, offset: (page - 1) * limit })
  const rows = json ? parseNotificationRows(json.rows) : []
  return { notifications: await notificationsWithMedia(dbs.reads, rows.slice(0, limit)), page, has_more: rows.length > limit }
}

const afterPage = prepared((db) => notificationSelect(db, sql.placeholder('user'), false, sql.placeholder('limit'), 0, sql.placeholder('after')).prepare())

/**
 * The caller's notifications with an id past `afterId`, oldest first, at most `limit`: in the list's
 * shape, so the live stream (notification-feed.ts) shows what the list shows. One range of
 * `notifications_user_page_idx` (user_id, id).
 */
export async function notificationsAfter(db: ReadDb, userId: number, afterId: number, limit: number): Promise<Notification[]> {
  const rows = await afterPage(db).all({ user: userId, after: afterId, limit })
  return notificationsWithMedia(db, rows)
}

/**
 * Notifications by id, each as its own recipient's list shows it: the list's query with the row's
 * recipient as the viewer, so the same joins, filters (blocked or suspended actors) and mapping.
 * What Web Push sends (delivery/push.ts); a row the list would hide, or one deleted, is absent.
 * One query for them all: a probe of the primary key per id.
 */
export async function notificationsByIds(db: ReadDb, ids: readonly number[]): Promise<Map<number, Notification>> {
  if (ids.length === 0) return new Map()
  const only = sql`${notifications.id} in (select value from json_each(${JSON.stringify(ids)}))`
  const rows = await notificationSelect(db, sql`${notifications.userId}`, false, ids.length, 0, undefined, only)
  return new Map((await notificationsWithMedia(db, rows)).map((notification) => [notification.id, notification]))
}

/**
 * How many of the caller's notifications are unread: their row's counter, which triggers keep exact
 * (migration 0016). It has no actor test, as the rows agree with the list: a block deletes the
 * notifications between the two, and a suspension marks those its account caused read (moderation).
 */
export function unreadCountQuery(db: ReadDb, userId: Param) {
  return db.select({ count: users.notificationsUnread }).from(users).where(eq(users.id, userId))
}

const unreadCount = prepared((db) => unreadCountQuery(db, sql.placeholder('user')).prepare())

/** The unread badge: polled by clients, so a prepared query. */
export async function countUnread(db: ReadDb, userId: number): Promise<{ count: number }> {
  const row = await unreadCount(db).get({ user: userId })
  return { count: row?.count ?? 0 }
}

/**
 * Marks one of the caller's notifications read, or all of them without an id; answers how many
 * changed (0 for one that was already read). Someone else's or a missing id is a 404, so ids of
 * other users' notifications cannot be probed. Lean `sql` statements, as they hold the write lock.
 */
export async function markRead(db: Db, userId: number, notificationId?: number): Promise<{ updated: number }> {
  return writeTransaction(db, async (tx) => {
    if (notificationId === undefined) {
      // All of them: the unread ones are past the read-up-to mark, which then moves to the newest.
      const result = await tx.run(sql`update notifications set is_read = 1 where ${ownedBy(userId, true)}`)
      await tx.run(sql`
        update users set notifications_read_upto = coalesce((select max(id) from notifications where user_id = ${userId}), notifications_read_upto)
        where id = ${userId}`)
      return { updated: result.rowsAffected }
    }
    const result = await tx.run(sql`update notifications set is_read = 1 where id = ${notificationId} and user_id = ${userId} and is_read = 0`)
    if (result.rowsAffected > 0) return { updated: result.rowsAffected }
    const own = await tx.values(sql`select 1 from notifications where id = ${notificationId} and user_id = ${userId}`)
    if (own.length === 0) throw new TRPCError({ code: 'NOT_FOUND', message: 'Notification not found' })
    return { updated: 0 }
  })
}
