/**
 * The calling session's Web Push subscription (Mastodon's `/api/v1/push/subscription`): one per
 * session, replaced by a new POST, gone with its session. Deliveries are made by the outbox
 * (delivery/push.ts), never here.
 */
import { createECDH } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import { pushAlertTypes, type PushPolicy, type PushSubscribeInput, type PushUpdateInput } from '../../shared/schemas/push.js'
import { writeTransaction, type Db } from '../db/client.js'
import { checkPublicUrl, parseUrl } from '../fetch-guard.js'
import type { Services } from '../services.js'

export interface PushSubscriptionView {
  id: number
  endpoint: string
  alerts: Record<string, boolean>
  policy: PushPolicy
  server_key: string
}

/** What a subscription answers: every notification type the list knows, on unless switched off (a type added later is on). */
function toView(row: { id: number; endpoint: string; alerts: string; policy: PushPolicy }, serverKey: string): PushSubscriptionView {
  const stored = JSON.parse(row.alerts) as Record<string, boolean>
  const alerts = Object.fromEntries(pushAlertTypes().map((type) => [type, stored[type] ?? true]))
  return { id: row.id, endpoint: row.endpoint, alerts, policy: row.policy, server_key: serverKey }
}

const notFound = () => new TRPCError({ code: 'NOT_FOUND', message: 'This session has no push subscription' })

/** Push needs a contact for the push services (RFC 8292 `sub`); without one, subscribing says what to set. */
function assertPushReady(services: Services): void {
  if (services.config.delivery.push.subject) return
  throw new TRPCError({
    code: 'SERVICE_UNAVAILABLE',
    message: 'Web Push is not set up on this server: set PLAZA_VAPID_SUBJECT (mailto:you@example.com or an https URL), or an https PLAZA_PUBLIC_URL, or PLAZA_MAIL_FROM',
  })
}

/**
 * A push service's endpoint, checked as the fetch guard checks any URL a user gives: https, no
 * credentials, every address of the host public (loopback and http only with the test switch,
 * PLAZA_FETCH_ALLOW_PRIVATE=1). Checked again at every delivery, connected to the checked address.
 */
async function checkEndpoint(services: Services, endpoint: string): Promise<string> {
  const field = 'subscription.endpoint'
  const url = parseUrl(endpoint, field)
  const allowPrivate = services.config.fetchAllowPrivate
  if (url.protocol !== 'https:' && !allowPrivate) throw new TRPCError({ code: 'BAD_REQUEST', message: `${field}: a push service is reached over https` })
  await checkPublicUrl(url.href, { field, allowPrivate })
  return url.href
}

/** The user agent's key must be a point on P-256, or every message to it would fail to encrypt. */
function assertCurvePoint(p256dh: string): void {
  try {
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    ecdh.computeSecret(Buffer.from(p256dh, 'base64url'))
  } catch {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'subscription.keys.p256dh is not a P-256 public key' })
  }
}

const selectBySession = (sessionId: number) => sql`select id, endpoint, alerts, policy from push_subscriptions where session_id = ${sessionId}`
type Row = { id: number; endpoint: string; alerts: string; policy: PushPolicy }

export async function getPushSubscription(services: Services, sessionId: number): Promise<PushSubscriptionView> {
  const [row] = await services.reads.all<Row>(selectBySession(sessionId))
  if (!row) throw notFound()
  return toView(row, (await services.delivery.vapidKeys()).publicKey)
}

/**
 * Subscribes the calling session, replacing its subscription if it had one (deliveries still
 * queued for the old one go with it). Alerts not given are on.
 */
export async function subscribePush(services: Services, user: { id: number }, sessionId: number, input: PushSubscribeInput, now: Date): Promise<PushSubscriptionView> {
  assertPushReady(services)
  assertCurvePoint(input.subscription.keys.p256dh)
  const endpoint = await checkEndpoint(services, input.subscription.endpoint)
  const serverKey = (await services.delivery.vapidKeys()).publicKey
  const alerts = JSON.stringify(input.data?.alerts ?? {})
  const policy = input.data?.policy ?? 'all'
  const row = await writeTransaction(services.db, async (tx) => {
    await tx.run(sql`delete from push_subscriptions where session_id = ${sessionId}`)
    const [created] = await tx.all<Row>(sql`
      insert into push_subscriptions (user_id, session_id, endpoint, p256dh, auth, alerts, policy, created_at, updated_at)
      values (${user.id}, ${sessionId}, ${endpoint}, ${input.subscription.keys.p256dh}, ${input.subscription.keys.auth}, ${alerts}, ${policy}, ${now.getTime()}, ${now.getTime()})
      returning id, endpoint, alerts, policy`)
    return created
  })
  return toView(row, serverKey)
}

/** Changes what the calling session's subscription pushes: the alerts given (others stay) and/or the policy. */
export async function updatePush(services: Services, sessionId: number, input: PushUpdateInput, now: Date): Promise<PushSubscriptionView> {
  const serverKey = (await services.delivery.vapidKeys()).publicKey
  const row = await writeTransaction(services.db, async (tx) => {
    const [current] = await tx.all<Row>(selectBySession(sessionId))
    if (!current) throw notFound()
    const alerts = JSON.stringify({ ...(JSON.parse(current.alerts) as Record<string, boolean>), ...input.data.alerts })
    const [updated] = await tx.all<Row>(sql`
      update push_subscriptions set alerts = ${alerts}, policy = ${input.data.policy ?? current.policy}, updated_at = ${now.getTime()}
      where id = ${current.id} returning id, endpoint, alerts, policy`)
    return updated
  })
  return toView(row, serverKey)
}

/** Removes the calling session's subscription, with what is still queued for it; none is not an error (Mastodon answers `{}` either way). */
export async function unsubscribePush(db: Db, sessionId: number): Promise<null> {
  await db.run(sql`delete from push_subscriptions where session_id = ${sessionId}`)
  return null
}

/** The server's VAPID public key, for apps to subscribe with. */
export async function vapidPublicKey(services: Services): Promise<{ public_key: string }> {
  return { public_key: (await services.delivery.vapidKeys()).publicKey }
}
