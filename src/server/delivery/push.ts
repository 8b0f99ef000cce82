/**
 * Web Push delivery: the sender of the `push_deliveries` outbox. A trigger on `notifications` queues
 * a row for each of the recipient's subscriptions in the notification's own transaction (migration
 * 0019), whatever the type and whichever process, host or command created it. Each serving process
 * runs one sender loop (outbox.ts) that claims due rows, renders each notification exactly as the
 * recipient's list shows it (`notificationsByIds`: the same row, type and block and suspension
 * rules), and posts it to the subscription's push service:
 *
 * - RFC 8291 `aes128gcm` encryption of the JSON payload to the subscription's keys, and an RFC 8292
 *   VAPID token (ES256, `aud` the endpoint's origin, `exp` 12 hours on, `sub` the configured
 *   contact), both by the `web-push` library; `TTL` (PLAZA_PUSH_TTL) and `Urgency: normal`.
 * - Through the fetch guard (`guardedPost`): the endpoint's addresses checked again and the
 *   connection pinned to them, no redirects, a time limit.
 * - 2xx: done. 404 or 410: the subscription is gone (RFC 8030 §7.3), and is deleted with whatever
 *   is queued for it. 429 and 5xx, a timeout or an unreachable host: tried again with backoff, never
 *   sooner than `Retry-After`. Any other answer: this message is dropped (logged). A message older
 *   than its TTL, or tried MAX_ATTEMPTS times, is dropped.
 *
 * Not pushed, and dropped: a notification deleted or hidden from the list since (its post deleted,
 * a block, a suspension), one whose actor the recipient has muted (a mute keeps it in the list but
 * never wakes a phone), one the subscription's policy leaves out, and any for a session that is no
 * longer live (its subscription goes too). These are checked when the row is sent, not when it was
 * queued, so a block made in between is respected.
 */
import { sql } from 'drizzle-orm'
import type { Notification } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { notificationsByIds } from '../domain/notifications.js'
import { guardedPost, type GuardedPostAnswer } from '../fetch-guard.js'
import type { Logger } from '../logger.js'
import type { PushConfig } from './config.js'
import { claimToken, parseRetryAfter, retryDelayMs } from './outbox.js'
import type { VapidKeys } from './vapid.js'

/** Rows claimed per batch. */
export const PUSH_BATCH = 32
/** Messages in flight at once per process. */
const PUSH_CONCURRENCY = 8
/** How long a claim holds its rows: past the time limit of every send of a batch, four rounds of PUSH_CONCURRENCY. */
const LEASE_MS = 120_000
/** Tries of one message before it is dropped (about two hours of backoff). */
export const MAX_ATTEMPTS = 8
const BACKOFF = { baseMs: 30_000, capMs: 30 * 60_000 }
/** The time limit of one post to a push service. */
const SEND_TIMEOUT_MS = 10_000
/** A push service takes 4096 bytes of ciphertext; aes128gcm adds 86 (header, padding delimiter, tag). The payload is kept well under. */
export const PAYLOAD_MAX_BYTES = 3000
/** A string field of the notification longer than this is cut when the payload would be too large. */
const FIELD_CUT = 200
/** How long a VAPID token is valid (RFC 8292 §2: at most 24 hours). */
const VAPID_TOKEN_SECONDS = 12 * 3600

export interface PushSender {
  /** Claims and sends one batch; answers how many rows were claimed. */
  runOnce(): Promise<number>
}

export interface PushSenderOptions {
  db: Db
  reads: ReadDb
  config: PushConfig
  /** Loopback and private push services (the test switch, PLAZA_FETCH_ALLOW_PRIVATE=1). */
  allowPrivate: boolean
  /** Base of the absolute icon URL (PLAZA_PUBLIC_URL); without it the payload's icon is null. */
  publicUrl?: string
  vapidKeys: () => Promise<VapidKeys>
  clock: () => Date
  logger: Logger
}

interface Claimed {
  id: number
  attempts: number
  createdAt: number
  subscriptionId: number
  endpoint: string
  p256dh: string
  auth: string
  policy: string
  notificationId: number
  live: number
  muted: number
  following: number
  follower: number
}

type Outcome =
  | { kind: 'sent' }
  | { kind: 'drop'; reason: string }
  | { kind: 'gone'; reason: string }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null }

/** A few words for the title, by type; a type this module does not know still reads well. */
const VERBS: Record<string, string> = {
  like: 'liked your post',
  comment: 'commented on your post',
  follow: 'followed you',
  story_view: 'viewed your story',
  follow_request: 'asked to follow you',
  mention: 'mentioned you',
  reply: 'replied to your comment',
}

/**
 * The JSON a push carries, Mastodon's fields (`notification_id`, `notification_type`, `title`,
 * `body`, `icon`, `preferred_locale`) plus `notification`, the list's own item, so an app shows it
 * without a request. Kept under PAYLOAD_MAX_BYTES: long text fields are cut, and if that is not
 * enough the item is left out (the app fetches it by id).
 */
export function pushPayload(notification: Notification, publicUrl?: string): string {
  const actor = notification.actor_full_name || `@${notification.actor_username}`
  const verb = VERBS[notification.type] ?? notification.type.replaceAll('_', ' ')
  const content = typeof notification.post_content === 'string' ? notification.post_content : ''
  const avatar = notification.actor_avatar
  const base = {
    notification_id: notification.id,
    notification_type: notification.type,
    title: `${actor} ${verb}`,
    body: content.length > 140 ? `${content.slice(0, 139)}…` : content,
    icon: avatar && publicUrl ? `${publicUrl}/${avatar}` : null,
    preferred_locale: 'en',
  }
  let json = JSON.stringify({ ...base, notification })
  if (Buffer.byteLength(json) <= PAYLOAD_MAX_BYTES) return json
  const cut = Object.fromEntries(
    Object.entries(notification).map(([key, value]) => [key, typeof value === 'string' && value.length > FIELD_CUT ? `${value.slice(0, FIELD_CUT - 1)}…` : value]),
  )
  json = JSON.stringify({ ...base, notification: cut })
  return Buffer.byteLength(json) <= PAYLOAD_MAX_BYTES ? json : JSON.stringify(base)
}

/** The host of an endpoint, for the log: the rest of the URL is the subscription's capability. */
const hostOf = (endpoint: string) => {
  try {
    return new URL(endpoint).host
  } catch {
    return '?'
  }
}

/** What an answer from a push service means for the message (RFC 8030 §5, §7.3, §8.4). */
export function outcomeOf(answer: GuardedPostAnswer, now: Date): Outcome {
  const { status } = answer
  if (status >= 200 && status < 300) return { kind: 'sent' }
  if (status === 404 || status === 410) return { kind: 'gone', reason: `HTTP ${status}` }
  if (status === 429 || status >= 500) return { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: parseRetryAfter(answer.headers['retry-after'], now) }
  return { kind: 'drop', reason: `HTTP ${status} ${answer.body.slice(0, 200).replace(/\s+/g, ' ')}`.trim() }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++])
    }),
  )
}

export function createPushSender(options: PushSenderOptions): PushSender {
  const { db, config, logger, clock } = options
  // web-push (and its asn1/jws dependencies) are loaded by the first batch that sends something.
  let webPush: Promise<typeof import('web-push')> | undefined

  async function send(row: Claimed, notification: Notification, keys: VapidKeys, now: Date): Promise<Outcome> {
    const lib = await (webPush ??= import('web-push').then((m) => (m as unknown as { default: typeof import('web-push') }).default ?? m))
    const payload = pushPayload(notification, options.publicUrl)
    const encrypted = lib.encrypt(row.p256dh, row.auth, payload, 'aes128gcm')
    const audience = new URL(row.endpoint).origin
    const vapid = lib.getVapidHeaders(audience, config.subject!, keys.publicKey, keys.privateKey, 'aes128gcm', Math.floor(now.getTime() / 1000) + VAPID_TOKEN_SECONDS)
    const headers = {
      'content-type': 'application/octet-stream',
      'content-encoding': 'aes128gcm',
      ttl: String(config.ttlSeconds),
      urgency: 'normal',
      authorization: vapid.Authorization,
    }
    try {
      const answer = await guardedPost(row.endpoint, { field: 'push endpoint', allowPrivate: options.allowPrivate, timeoutMs: SEND_TIMEOUT_MS, headers, body: encrypted.cipherText })
      return outcomeOf(answer, now)
    } catch (error) {
      const message = String((error as Error)?.message ?? error)
      // The guard refused the address: the endpoint now points somewhere private. Nothing will reach it.
      if ((error as { code?: string }).code === 'BAD_REQUEST') return { kind: 'gone', reason: message }
      return { kind: 'retry', reason: message, retryAfterMs: null }
    }
  }

  /** Claims a batch of due rows (one statement: atomic against every other sender) and reads what deciding on them needs. */
  async function claim(now: Date, token: string): Promise<{ count: number; rows: Claimed[] }> {
    const ids = await db.values<[number]>(sql`
      update push_deliveries set next_attempt_at = ${now.getTime() + LEASE_MS}, claim = ${token}, attempts = attempts + 1
      where id in (select id from push_deliveries where next_attempt_at <= ${now.getTime()} order by next_attempt_at limit ${PUSH_BATCH})
      returning id`)
    if (ids.length === 0) return { count: 0, rows: [] }
    // Everything a decision needs, for the whole batch in one statement (the writing connection: it just wrote them).
    const rows = await db.all<Claimed>(sql`
      select d.id, d.attempts, d.created_at as createdAt, s.id as subscriptionId, s.endpoint, s.p256dh, s.auth, s.policy,
        d.notification_id as notificationId,
        (ses.revoked_at is null and ses.expires_at > ${now.getTime()}) as live,
        exists (select 1 from mutes where muter_id = s.user_id and muted_id = n.actor_id) as muted,
        exists (select 1 from follows where follower_id = s.user_id and following_id = n.actor_id) as following,
        exists (select 1 from follows where follower_id = n.actor_id and following_id = s.user_id) as follower
      from push_deliveries d
      join push_subscriptions s on s.id = d.subscription_id
      join sessions ses on ses.id = s.session_id
      join notifications n on n.id = d.notification_id
      where d.id in (select value from json_each(${JSON.stringify(ids.map((row) => row[0]))})) and d.claim = ${token}`)
    return { count: ids.length, rows }
  }

  /** Why a claimed row is not sent, or null to send it. */
  function skipReason(row: Claimed, notification: Notification | undefined, now: Date): Outcome | null {
    if (!row.live) return { kind: 'gone', reason: 'session no longer live' }
    if (!notification) return { kind: 'drop', reason: 'notification deleted or hidden' }
    if (row.muted) return { kind: 'drop', reason: 'actor muted' }
    const policy = row.policy
    if (policy === 'none' || (policy === 'followed' && !row.following) || (policy === 'follower' && !row.follower)) return { kind: 'drop', reason: `policy ${policy}` }
    if (now.getTime() - row.createdAt > config.ttlSeconds * 1000) return { kind: 'drop', reason: 'older than its TTL' }
    return null
  }

  async function record(token: string, results: Array<{ row: Claimed; outcome: Outcome }>, now: Date): Promise<void> {
    const done: number[] = []
    const gone: number[] = []
    const retries: Array<[number, number, string]> = []
    for (const { row, outcome } of results) {
      if (outcome.kind === 'sent') done.push(row.id)
      else if (outcome.kind === 'gone') {
        gone.push(row.subscriptionId)
        logger.info('push subscription removed', { subscription: row.subscriptionId, host: hostOf(row.endpoint), reason: outcome.reason })
      } else if (outcome.kind === 'retry' && row.attempts < MAX_ATTEMPTS) {
        retries.push([row.id, now.getTime() + retryDelayMs(row.attempts, { ...BACKOFF, retryAfterMs: outcome.retryAfterMs }), outcome.reason.slice(0, 300)])
      } else {
        done.push(row.id)
        if (outcome.kind !== 'drop' || !/deleted|hidden|muted|policy/.test(outcome.reason)) {
          logger.warn('push message dropped', { subscription: row.subscriptionId, host: hostOf(row.endpoint), attempts: row.attempts, reason: outcome.reason })
        }
      }
    }
    await writeTransaction(db, async (tx) => {
      if (done.length) await tx.run(sql`delete from push_deliveries where id in (select value from json_each(${JSON.stringify(done)})) and claim = ${token}`)
      if (gone.length) await tx.run(sql`delete from push_subscriptions where id in (select value from json_each(${JSON.stringify(gone)}))`)
      if (retries.length) {
        await tx.run(sql`
          update push_deliveries set next_attempt_at = r.value ->> 1, last_error = r.value ->> 2, claim = null
          from (select value from json_each(${JSON.stringify(retries)})) as r
          where push_deliveries.id = r.value ->> 0 and push_deliveries.claim = ${token}`)
      }
    })
  }

  return {
    async runOnce() {
      const now = clock()
      // A read first: an idle poll must not take the write lock (an UPDATE does, even of no rows).
      if ((await options.reads.values(sql`select 1 from push_deliveries where next_attempt_at <= ${now.getTime()} limit 1`)).length === 0) return 0
      const token = claimToken()
      const { count, rows: claimed } = await claim(now, token)
      if (claimed.length === 0) return count
      const notifications = await notificationsByIds(options.reads, claimed.map((row) => row.notificationId))
      const keys = await options.vapidKeys()
      const results: Array<{ row: Claimed; outcome: Outcome }> = []
      await eachLimited(claimed, PUSH_CONCURRENCY, async (row) => {
        const notification = notifications.get(row.notificationId)
        const outcome = skipReason(row, notification, now) ?? (config.subject ? await send(row, notification!, keys, now) : { kind: 'retry', reason: 'no VAPID subject configured', retryAfterMs: null })
        results.push({ row, outcome })
      })
      await record(token, results, now)
      return count
    },
  }
}
