/**
 * Live notifications: the feed behind GET /notifications/stream and `plaza social notifications --follow`.
 *
 * Notifications are written by whichever process handled the like, comment, follow or story view
 * (`plaza serve --workers N`, another server on the same database, the embedded CLI), so the
 * database is the only place every new one is seen: there is no in-memory fan-out. Each process has
 * one poller, running only while streams are open, that reads the newest notification id (the top
 * of the primary key: one b-tree descent) every `pollMs`. When it moved, the poller reads which
 * users the new rows are for (a rowid range), and each connected user's streams read what they
 * have not had yet with `notificationsAfter`, the list's own query, so the stream shows exactly
 * what the list shows.
 *
 * No loss, no duplicates: SQLite has one writer at a time and ids are AUTOINCREMENT, so ids become
 * visible in increasing order; each stream keeps the id of the last event it was given (its
 * cursor, which is also the SSE `id:` a client resumes from) and only ever reads past it. A
 * reconnecting client that sends its last id simply starts with that cursor.
 *
 * Bounded: a stream whose sink reports a full buffer gets nothing more (its cursor stays put) until
 * the sink drains, when it catches up from the database; one that stays full for `stallMs` is ended
 * (the client resumes with Last-Event-ID). So a slow client costs one socket buffer, never a queue.
 */
import { TRPCError } from '@trpc/server'
import { and, eq, gt, inArray, lte, max, sql, type Placeholder } from 'drizzle-orm'
import type { Notification } from '../../shared/types.js'
import type { StreamConfig } from '../config.js'
import type { ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { notifications, users } from '../db/schema.js'
import type { Logger } from '../logger.js'
import { countUnread, notificationsAfter } from './notifications.js'

/** What a stream is handed, in order. */
export type FeedEvent =
  | { type: 'notification'; notification: Notification }
  | { type: 'unread_count'; count: number }
  | { type: 'heartbeat' }

/** Where a stream's events go: an HTTP response (rest/notification-stream.ts) or the CLI's stdout. */
export interface FeedSink {
  /** Takes one event; false when the sink's buffer is now full (nothing more is sent until it drains). */
  send(event: FeedEvent): boolean
  /** Calls `listener` once the buffer has room again. */
  onDrain(listener: () => void): void
  /** Ends the sink: the feed is closing, the client stalled, or the stream was closed. */
  end(): void
}

export interface FeedStream {
  readonly userId: number
  /**
   * Starts delivery after notification `afterId` (a client's Last-Event-ID), or, without one, after
   * the user's newest notification (nothing replayed). The first events are the replay, then the
   * unread count.
   */
  start(afterId?: number): Promise<void>
  /** Stops delivery and frees the stream's place (idempotent). Does not end the sink. */
  close(): void
}

export interface NotificationFeed {
  /** Takes a place for a new stream of `userId`; throws 429 past the per-user or total cap, 503 once closing. */
  subscribe(userId: number, sink: FeedSink): FeedStream
  /** How many streams are open in this process. */
  readonly size: number
  /** Ends every stream and stops the poller; later subscriptions are refused. */
  close(): void
}

/** Notifications read per query while a stream catches up. */
const BATCH = 100
/** Users per unread-count query (well under SQLite's bound-parameter limit). */
const UNREAD_CHUNK = 500

/** The newest notification id: the last entry of the primary key. */
export const newestIdQuery = (db: ReadDb) => db.select({ id: max(notifications.id) }).from(notifications)
/** The user's newest notification id: the last entry of their range of `notifications_user_page_idx` (user_id, id). */
export const newestIdOfUserQuery = (db: ReadDb, userId: number | Placeholder) =>
  db.select({ id: max(notifications.id) }).from(notifications).where(eq(notifications.userId, userId))
/** Who the rows that arrived since the last poll are for: a range of the primary key. */
export const recipientsQuery = (db: ReadDb, from: number | Placeholder, to: number | Placeholder) =>
  db.selectDistinct({ userId: notifications.userId }).from(notifications).where(and(gt(notifications.id, from), lte(notifications.id, to)))
/** Unread counts of several users: their rows' counters (users.notifications_unread), one key each. */
export const rawUnreadQuery = (db: ReadDb, userIds: number[]) =>
  db.select({ userId: users.id, count: users.notificationsUnread }).from(users).where(inArray(users.id, userIds))

const newestId = prepared((db) => newestIdQuery(db).prepare())
const newestIdOfUser = prepared((db) => newestIdOfUserQuery(db, sql.placeholder('user')).prepare())
const recipientsBetween = prepared((db) => recipientsQuery(db, sql.placeholder('from'), sql.placeholder('to')).prepare())

/**
 * Unread counts of many users in one query (their rows' counters), only to notice that a
 * count changed, for instance after a mark_read in another process; the number shown is then read
 * with `countUnread`, the badge's own query.
 */
async function rawUnreadCounts(db: ReadDb, userIds: number[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>(userIds.map((id) => [id, 0]))
  for (let i = 0; i < userIds.length; i += UNREAD_CHUNK) {
    const rows = await rawUnreadQuery(db, userIds.slice(i, i + UNREAD_CHUNK))
    for (const row of rows) counts.set(row.userId, row.count)
  }
  return counts
}

interface Stream extends FeedStream {
  sink: FeedSink
  /** The last notification id this stream was given (or started after); null until started. */
  cursor: number | null
  /** Its sink's buffer is full: it waits for a drain (or the stall timer). */
  saturated: boolean
  stallTimer: NodeJS.Timeout | null
  /** The unread count last sent, so an unchanged one is not repeated. */
  sentUnread: number | null
  closed: boolean
}

interface Channel {
  streams: Set<Stream>
  /** Streams to catch up on the next tick (new, drained). */
  dirty: boolean
  /** The raw unread count last seen (rawUnreadCounts), to notice changes. */
  rawUnread: number | null
}

export interface FeedOptions {
  reads: ReadDb
  logger: Logger
  limits: StreamConfig
}

/** The process's one feed; timers run only while at least one stream is open. */
export function createNotificationFeed({ reads, logger, limits }: FeedOptions): NotificationFeed {
  const channels = new Map<number, Channel>()
  let size = 0
  let closed = false
  /** The newest notification id the poller has dispatched up to; null while it is stopped. */
  let seen: number | null = null
  let pollTimer: NodeJS.Timeout | null = null
  let heartbeatTimer: NodeJS.Timeout | null = null
  let ticking: Promise<void> | null = null
  let again = false
  let lastUnreadCheck = 0

  function channelOf(userId: number): Channel {
    let channel = channels.get(userId)
    if (!channel) channels.set(userId, (channel = { streams: new Set(), dirty: false, rawUnread: null }))
    return channel
  }

  /**
   * Hands an event to a stream unless it is closed or saturated (false then). A sink that answers
   * "full" has still taken the event: the stream is marked saturated, and the stall timer armed.
   */
  function deliver(stream: Stream, event: FeedEvent): boolean {
    if (stream.closed || stream.saturated) return false
    if (stream.sink.send(event)) return true
    stream.saturated = true
    stream.stallTimer = setTimeout(() => {
      logger.info('notification stream stalled: disconnected', { userId: stream.userId })
      endStream(stream)
    }, limits.stallMs)
    stream.stallTimer.unref()
    stream.sink.onDrain(() => {
      if (stream.closed) return
      clearTimeout(stream.stallTimer!)
      stream.stallTimer = null
      stream.saturated = false
      channelOf(stream.userId).dirty = true
      wake()
    })
    return true
  }

  async function sendUnread(stream: Stream, userId: number) {
    const { count: unread } = await countUnread(reads, userId)
    if (unread !== stream.sentUnread && deliver(stream, { type: 'unread_count', count: unread })) stream.sentUnread = unread
  }

  /**
   * Gives each ready stream of the user what it has not had, in batches read from the lowest cursor
   * among them, then the unread count to those that got something (or were just started).
   */
  async function catchUp(userId: number, channel: Channel) {
    const touched = new Set<Stream>()
    for (;;) {
      const ready = [...channel.streams].filter((s) => s.cursor !== null && !s.saturated && !s.closed)
      if (ready.length === 0) break
      const from = Math.min(...ready.map((s) => s.cursor!))
      const rows = await notificationsAfter(reads, userId, from, BATCH)
      for (const stream of ready) {
        for (const notification of rows) {
          if (notification.id <= stream.cursor!) continue
          if (!deliver(stream, { type: 'notification', notification })) break
          stream.cursor = notification.id
          touched.add(stream)
        }
      }
      if (rows.length < BATCH) break
    }
    for (const stream of channel.streams) {
      if (stream.cursor !== null && (touched.has(stream) || stream.sentUnread === null)) await sendUnread(stream, userId)
    }
  }

  async function checkUnread() {
    const counts = await rawUnreadCounts(reads, [...channels.keys()])
    for (const [userId, raw] of counts) {
      const channel = channels.get(userId)
      if (!channel || channel.rawUnread === raw) continue
      channel.rawUnread = raw
      for (const stream of channel.streams) if (stream.cursor !== null) await sendUnread(stream, userId)
    }
  }

  async function tick() {
    const newest = (await newestId(reads).get())?.id ?? 0
    const due = new Set<number>()
    for (const [userId, channel] of channels) {
      if (channel.dirty) due.add(userId)
      channel.dirty = false
    }
    if (seen !== null && newest > seen) {
      for (const { userId } of await recipientsBetween(reads).all({ from: seen, to: newest })) if (channels.has(userId)) due.add(userId)
    }
    // Every row up to `newest` was committed before the reads below start, so they see it: the next tick starts past it.
    seen = newest
    for (const userId of due) {
      const channel = channels.get(userId)
      if (channel) await catchUp(userId, channel)
    }
    const now = Date.now()
    if (now - lastUnreadCheck >= limits.unreadCheckMs) {
      lastUnreadCheck = now
      await checkUnread()
    }
  }

  /** Runs a tick now (or right after the one running), then keeps polling while streams are open. */
  function wake() {
    if (closed) return
    if (ticking) {
      again = true
      return
    }
    if (pollTimer) clearTimeout(pollTimer)
    pollTimer = null
    ticking = tick()
      .catch((error) => logger.error('notification feed poll failed', { error: String((error as Error)?.cause ?? error) }))
      .finally(() => {
        ticking = null
        if (closed || size === 0) return
        if (again) {
          again = false
          return wake()
        }
        pollTimer = setTimeout(wake, limits.pollMs)
        pollTimer.unref()
      })
  }

  function startTimers() {
    heartbeatTimer ??= setInterval(() => {
      for (const channel of channels.values()) for (const stream of channel.streams) if (stream.cursor !== null) deliver(stream, { type: 'heartbeat' })
    }, limits.heartbeatMs)
    heartbeatTimer.unref()
  }

  function stopTimers() {
    if (pollTimer) clearTimeout(pollTimer)
    if (heartbeatTimer) clearInterval(heartbeatTimer)
    pollTimer = heartbeatTimer = null
    // Restarted from the then-newest id: nobody was listening in between.
    seen = null
  }

  function release(stream: Stream) {
    if (stream.closed) return
    stream.closed = true
    if (stream.stallTimer) clearTimeout(stream.stallTimer)
    const channel = channels.get(stream.userId)
    channel?.streams.delete(stream)
    if (channel?.streams.size === 0) channels.delete(stream.userId)
    size--
    if (size === 0) stopTimers()
  }

  function endStream(stream: Stream) {
    release(stream)
    stream.sink.end()
  }

  return {
    get size() {
      return size
    },

    subscribe(userId, sink) {
      if (closed) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The server is shutting down; reconnect in a moment' })
      if (size >= limits.total) throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: `Too many notification streams are open (at most ${limits.total}); try again later` })
      const channel = channelOf(userId)
      if (channel.streams.size >= limits.perUser) {
        throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: `Too many notification streams open for this account (at most ${limits.perUser}); close one first` })
      }
      const stream: Stream = {
        userId,
        sink,
        cursor: null,
        saturated: false,
        stallTimer: null,
        sentUnread: null,
        closed: false,
        async start(afterId) {
          const cursor = afterId ?? (await newestIdOfUser(reads).get({ user: userId }))?.id ?? 0
          if (stream.closed) return
          stream.cursor = cursor
          channelOf(userId).dirty = true
          wake()
        },
        close: () => release(stream),
      }
      channel.streams.add(stream)
      size++
      startTimers()
      return stream
    },

    close() {
      closed = true
      for (const channel of [...channels.values()]) for (const stream of [...channel.streams]) endStream(stream)
      stopTimers()
    },
  }
}
