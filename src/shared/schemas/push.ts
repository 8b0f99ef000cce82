/**
 * Web Push subscriptions, shaped like Mastodon's `/api/v1/push/subscription`: the browser's
 * PushSubscription (`subscription.endpoint`, `subscription.keys.p256dh`, `subscription.keys.auth`)
 * and what to push (`data.alerts` per notification type, `data.policy`). docs/push-email-2fa.md.
 */
import { z } from 'zod'
import { notificationType } from './responses.js'

/** Whose notifications are pushed: everyone's, only those of accounts the user follows, of their followers, or nobody's. */
export const PUSH_POLICIES = ['all', 'followed', 'follower', 'none'] as const
export type PushPolicy = (typeof PUSH_POLICIES)[number]

/** The notification types alerts may name: the list's own, so a type added there is one here too. */
export const pushAlertTypes = (): readonly string[] => notificationType.options

/** JSON booleans, or the strings a form-encoded Mastodon client sends. */
const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])], { error: 'must be true or false' }).transform((v) => v === true || v === 'true' || v === '1')

const alerts = z.record(z.string(), flag).superRefine((value, ctx) => {
  const known = pushAlertTypes()
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) ctx.addIssue({ code: 'custom', message: `data.alerts: "${key.slice(0, 40)}" is not a notification type (${known.join(', ')})` })
  }
})

const policy = z.enum(PUSH_POLICIES, { error: `data.policy must be one of ${PUSH_POLICIES.join(', ')}` })

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$|^[A-Za-z0-9+/]+={0,2}$/
/** A key in base64url (or plain base64, as some clients send it) that decodes to `bytes` bytes. */
const key = (name: string, bytes: number, what: string) =>
  z
    .string({ error: `${name} is required` })
    .trim()
    .max(200, `${name} is too long`)
    .regex(BASE64URL, `${name} must be base64url`)
    .refine((value) => Buffer.from(value, 'base64url').length === bytes, `${name} must be ${what} (${bytes} bytes in base64url)`)
    .transform((value) => Buffer.from(value, 'base64url').toString('base64url'))

const pushData = z.object({ alerts: alerts.optional(), policy: policy.optional() }, { error: 'data must be an object' })

export const pushSubscribeInput = z.object({
  subscription: z.object(
    {
      endpoint: z.string({ error: 'subscription.endpoint is required' }).trim().min(1, 'subscription.endpoint is required').max(2048, 'subscription.endpoint is too long'),
      keys: z.object(
        {
          p256dh: key('subscription.keys.p256dh', 65, "the user agent's P-256 public key, uncompressed"),
          auth: key('subscription.keys.auth', 16, 'the 16-byte authentication secret'),
        },
        { error: 'subscription.keys is required ({p256dh, auth})' },
      ),
    },
    { error: 'subscription is required ({endpoint, keys: {p256dh, auth}})' },
  ),
  data: pushData.optional(),
})
export type PushSubscribeInput = z.output<typeof pushSubscribeInput>

export const pushUpdateInput = z.object({ data: pushData.refine((d) => d.alerts !== undefined || d.policy !== undefined, 'give data.alerts or data.policy') })
export type PushUpdateInput = z.output<typeof pushUpdateInput>

export const pushSubscription = z
  .strictObject({
    id: z.number().int().positive(),
    endpoint: z.string().describe("The push service URL the server posts this session's notifications to"),
    alerts: z.record(z.string(), z.boolean()).describe('Every notification type, and whether it is pushed'),
    policy: z.enum(PUSH_POLICIES).describe('Whose notifications are pushed'),
    server_key: z.string().describe("The server's VAPID public key (base64url): the applicationServerKey the subscription was made with"),
  })
  .meta({ id: 'PushSubscription', description: "The calling session's Web Push subscription" })

export const vapidKey = z
  .strictObject({ public_key: z.string().describe("Uncompressed P-256 point, base64url: pass it as PushManager.subscribe's applicationServerKey") })
  .meta({ id: 'VapidKey', description: "The server's VAPID public key" })
