/**
 * Outgoing delivery as a process sees it: the VAPID keys, the mail templates and outbox, and one
 * sender loop per channel while the process serves (outbox.ts). docs/push-email-2fa.md.
 */
import { TRPCError } from '@trpc/server'
import type { ServerConfig } from '../config.js'
import type { ErrorCases } from '../errors.js'
import type { Db, ReadDb, Tx } from '../db/client.js'
import type { Logger } from '../logger.js'
import { createMailSender, enqueueMail, smtpTransport, MAIL_BATCH, type MailTransport } from './mail.js'
import { startSenderLoop, type SenderLoop } from './outbox.js'
import { createPushSender, PUSH_BATCH } from './push.js'
import { loadTemplates, renderMail, type MailKind, type MailVariables } from './templates.js'
import { loadVapidKeys, type VapidKeys } from './vapid.js'

/** What to set for mail: said by every route that would mail when none is configured. */
export const MAIL_NOT_CONFIGURED = 'Mail is not set up on this server: the operator sets PLAZA_SMTP_URL (smtp://user:password@host:587) and PLAZA_MAIL_FROM'

/** What a procedure that mails can answer for that reason (the OpenAPI document). */
export const MAIL_ERRORS: ErrorCases = { 503: 'Mail is not set up on this server (PLAZA_SMTP_URL and PLAZA_MAIL_FROM)' }

export interface Mailer {
  /** True when PLAZA_SMTP_URL is set. */
  readonly configured: boolean
  /** Throws 503 naming what to set when mail is not configured. */
  assertConfigured(): void
  /** Renders a message of `kind` and queues it in `tx` (the transaction that made its token). */
  send(tx: Db | Tx, message: { kind: MailKind; userId: number; to: string; expiresAt: number; variables: MailVariables }, now: Date): Promise<void>
  /** Where a mailed link of `kind` points, `{token}` filled in. */
  link(kind: MailKind, token: string): string
}

export interface Delivery {
  /** The VAPID pair: configured, stored, or made and stored now. */
  vapidKeys(): Promise<VapidKeys>
  mail: Mailer
  /** Runs both senders until nothing due is left (tests; a process that serves runs them on a timer). */
  drain(): Promise<void>
  close(): Promise<void>
}

export interface DeliveryOptions {
  db: Db
  reads: ReadDb
  config: ServerConfig
  clock: () => Date
  logger: Logger
  /** Run the sender loops (a serving process); off for a one-shot command, whose queued rows a server sends. */
  background: boolean
}

/** The pages Plaza serves for mailed links, under PLAZA_PUBLIC_URL (rest/account-pages.ts). */
export const LINK_PATHS: Record<MailKind, string> = {
  password_reset: '/api/mobile/auth/password/reset',
  verify_email: '/api/mobile/auth/email/verify',
}

export async function createDelivery(options: DeliveryOptions): Promise<Delivery> {
  const { config, db, logger, clock } = options
  const mailConfig = config.delivery.mail
  // Checked now: a broken template stops the start-up, not the first reset.
  const templates = loadTemplates(mailConfig?.templatesDir ?? null)
  let keys: Promise<VapidKeys> | undefined
  const vapidKeys = () =>
    (keys ??= loadVapidKeys(db, config.delivery.push.vapidKeys, clock()).catch((error) => {
      // A failed read is tried again next time, not remembered.
      keys = undefined
      throw error
    }))

  const mail: Mailer = {
    configured: mailConfig !== null,
    assertConfigured() {
      if (!mailConfig) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: MAIL_NOT_CONFIGURED })
    },
    link(kind, token) {
      const template = kind === 'password_reset' ? mailConfig?.resetUrl : mailConfig?.verifyUrl
      if (template) return template.replace('{token}', encodeURIComponent(token))
      // PLAZA_PUBLIC_URL is required with mail unless both templates are set (delivery/config.ts); read at send time, as tests set it after listening.
      return `${config.publicUrl}${LINK_PATHS[kind]}?token=${encodeURIComponent(token)}`
    },
    async send(tx, message, now) {
      mail.assertConfigured()
      const rendered = renderMail(templates[message.kind], message.variables)
      await enqueueMail(tx, { ...rendered, kind: message.kind, userId: message.userId, to: message.to, expiresAt: message.expiresAt }, now)
    },
  }

  const loops: SenderLoop[] = []
  let transport: Promise<MailTransport> | undefined
  if (options.background) {
    // Made at the first start (and by whichever process gets there first), so apps can subscribe at once.
    await vapidKeys()
    const push = createPushSender({
      db,
      reads: options.reads,
      config: config.delivery.push,
      allowPrivate: config.fetchAllowPrivate,
      publicUrl: config.publicUrl,
      vapidKeys,
      clock,
      logger,
    })
    loops.push(startSenderLoop({ name: 'push', pollMs: config.delivery.pollMs, batch: PUSH_BATCH, runOnce: () => push.runOnce(), logger }))
    if (mailConfig) {
      const sender = createMailSender({ db, reads: options.reads, config: mailConfig, transport: () => (transport ??= smtpTransport(mailConfig)), clock, logger })
      loops.push(startSenderLoop({ name: 'mail', pollMs: config.delivery.pollMs, batch: MAIL_BATCH, runOnce: () => sender.runOnce(), logger }))
    }
  }

  return {
    vapidKeys,
    mail,
    async drain() {
      for (const loop of loops) await loop.drain()
    },
    async close() {
      await Promise.all(loops.map((loop) => loop.close()))
      await transport?.then((made) => made.close(), () => {})
    },
  }
}
