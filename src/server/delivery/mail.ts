/**
 * Mail: the `mail_outbox` table and its sender, over SMTP with nodemailer (`PLAZA_SMTP_URL`,
 * `PLAZA_MAIL_FROM`). A request that mails (a password reset, a verification link) renders the
 * message and inserts it in its own transaction; each serving process's sender loop (outbox.ts)
 * claims due messages and hands them to the SMTP server. A temporary failure (a 4xx reply, a
 * connection refused or timed out) is retried with backoff; a permanent one (a 5xx reply), the
 * link's expiry or MAX_ATTEMPTS tries ends it as `failed`. The bodies carry single-use links, so
 * they are erased once the message is sent or given up, and never logged; `plaza admin mail`
 * shows the rest of the row.
 */
import { sql } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { Db, ReadDb, Tx } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { MailConfig } from './config.js'
import { claimToken, retryDelayMs } from './outbox.js'
import type { MailKind, RenderedMail } from './templates.js'

/** Messages claimed per batch (each is one SMTP transaction on the sender's connection). */
export const MAIL_BATCH = 10
/** Longer than a batch can take at SMTP_TIMEOUTS. */
const LEASE_MS = 10 * 60_000
export const MAIL_MAX_ATTEMPTS = 8
const BACKOFF = { baseMs: 30_000, capMs: 10 * 60_000 }
/** nodemailer's defaults are minutes long; a stuck server must not hold a batch that long. */
const SMTP_TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000, dnsTimeout: 10_000 }

export interface OutgoingMail extends RenderedMail {
  kind: MailKind
  userId: number | null
  to: string
  /** After this, the message's link no longer works: it is not worth sending. */
  expiresAt: number
}

/** Queues a message in the caller's transaction; the sender loop sends it (at once when it polls next). */
export async function enqueueMail(tx: Db | Tx, mail: OutgoingMail, now: Date): Promise<void> {
  await tx.run(sql`
    insert into mail_outbox (user_id, kind, recipient, subject, text_body, html_body, next_attempt_at, expires_at, created_at)
    values (${mail.userId}, ${mail.kind}, ${mail.to}, ${mail.subject}, ${mail.text}, ${mail.html}, ${now.getTime()}, ${mail.expiresAt}, ${now.getTime()})`)
}

/** What nodemailer needs of a transport: one message at a time. */
export interface MailTransport {
  sendMail(message: { from: string; to: string; subject: string; text: string; html: string }): Promise<unknown>
  close(): void
}

/** The SMTP transport of `PLAZA_SMTP_URL` (one connection per message; nodemailer is loaded only when mail is configured). */
export async function smtpTransport(config: MailConfig): Promise<MailTransport> {
  const { default: nodemailer } = await import('nodemailer')
  return nodemailer.createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS } as Parameters<typeof nodemailer.createTransport>[0]) as unknown as MailTransport
}

/** Whether an SMTP failure is worth trying again: no reply at all (the connection), or a 4xx reply. A 5xx is permanent. */
export function isTemporary(error: unknown): boolean {
  const code = (error as { responseCode?: number }).responseCode
  return typeof code !== 'number' || code < 500
}

interface Claimed {
  id: number
  kind: string
  recipient: string
  subject: string
  text_body: string | null
  html_body: string | null
  attempts: number
  expires_at: number
}

export interface MailSender {
  runOnce(): Promise<number>
}

/** Sent and given-up messages are kept this long for `plaza admin mail`, then deleted. */
export const MAIL_RECORD_DAYS = 30
const SWEEP_EVERY_MS = 3600_000
/** Rows looked at per sweep, from the oldest (rows are written in time order, so the primary key's start is the oldest). */
const SWEEP_ROWS = 500

/** One message as `plaza admin mail` lists it: never its body. */
export interface MailRecord {
  id: number
  kind: string
  to: string
  status: 'pending' | 'sent' | 'failed'
  attempts: number
  created_at: string
  /** When a pending message is tried next. */
  next_attempt_at: string | null
  sent_at: string | null
  last_error: string | null
}

/** The outbox, newest first (the primary key backwards; with a status, the rows of that status along it). */
export async function listMail(db: ReadDb, options: { status?: MailRecord['status']; limit: number }): Promise<MailRecord[]> {
  const rows = await db.all<{ id: number; kind: string; recipient: string; status: MailRecord['status']; attempts: number; created_at: number; next_attempt_at: number | null; sent_at: number | null; last_error: string | null }>(sql`
    select id, kind, recipient, status, attempts, created_at, next_attempt_at, sent_at, last_error from mail_outbox
    ${options.status ? sql`where status = ${options.status}` : sql``} order by id desc limit ${options.limit}`)
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    to: row.recipient,
    status: row.status,
    attempts: row.attempts,
    created_at: formatDateTime(row.created_at),
    next_attempt_at: row.next_attempt_at === null ? null : formatDateTime(row.next_attempt_at),
    sent_at: row.sent_at === null ? null : formatDateTime(row.sent_at),
    last_error: row.last_error,
  }))
}

export function createMailSender(options: { db: Db; reads: ReadDb; config: MailConfig; transport: () => Promise<MailTransport>; clock: () => Date; logger: Logger }): MailSender {
  const { db, config, logger } = options
  const finish = (id: number, token: string, status: 'sent' | 'failed', now: Date, error: string | null) =>
    db.run(sql`
      update mail_outbox set status = ${status}, next_attempt_at = null, claim = null, text_body = null, html_body = null,
        sent_at = ${status === 'sent' ? now.getTime() : null}, last_error = ${error}
      where id = ${id} and claim = ${token}`)
  let lastSweep: number | null = null
  /** Deletes the oldest records past MAIL_RECORD_DAYS, a bounded slice at a time, at most hourly. */
  const sweep = async (now: Date) => {
    if (lastSweep !== null && now.getTime() - lastSweep < SWEEP_EVERY_MS) return
    lastSweep = now.getTime()
    await db.run(sql`
      delete from mail_outbox where id in (select id from mail_outbox order by id limit ${SWEEP_ROWS})
        and status <> 'pending' and created_at < ${now.getTime() - MAIL_RECORD_DAYS * 86_400_000}`)
  }
  return {
    async runOnce() {
      const now = options.clock()
      await sweep(now)
      // A read first: an idle poll must not take the write lock (an UPDATE does, even of no rows).
      const due = await options.reads.values(sql`select 1 from mail_outbox where next_attempt_at is not null and next_attempt_at <= ${now.getTime()} limit 1`)
      if (due.length === 0) return 0
      const token = claimToken()
      const rows = await db.all<Claimed>(sql`
        update mail_outbox set next_attempt_at = ${now.getTime() + LEASE_MS}, claim = ${token}, attempts = attempts + 1
        where id in (
          select id from mail_outbox where next_attempt_at is not null and next_attempt_at <= ${now.getTime()}
          order by next_attempt_at limit ${MAIL_BATCH})
        returning id, kind, recipient, subject, text_body, html_body, attempts, expires_at`)
      if (rows.length === 0) return 0
      const transport = await options.transport()
      for (const row of rows) {
        if (row.expires_at <= now.getTime() || row.text_body === null || row.html_body === null) {
          await finish(row.id, token, 'failed', now, 'its link expired before it could be sent')
          logger.warn('mail given up', { id: row.id, kind: row.kind, reason: 'link expired' })
          continue
        }
        try {
          await transport.sendMail({ from: config.from, to: row.recipient, subject: row.subject, text: row.text_body, html: row.html_body })
          await finish(row.id, token, 'sent', options.clock(), null)
          logger.info('mail sent', { id: row.id, kind: row.kind })
        } catch (error) {
          // nodemailer's message quotes the server's reply, never the message's body.
          const reason = String((error as Error)?.message ?? error).slice(0, 300)
          const at = options.clock()
          if (isTemporary(error) && row.attempts < MAIL_MAX_ATTEMPTS) {
            const next = Math.min(row.expires_at, at.getTime() + retryDelayMs(row.attempts, BACKOFF))
            await db.run(sql`update mail_outbox set next_attempt_at = ${next}, claim = null, last_error = ${reason} where id = ${row.id} and claim = ${token}`)
            logger.warn('mail not sent; it is retried', { id: row.id, kind: row.kind, attempts: row.attempts, error: reason })
          } else {
            await finish(row.id, token, 'failed', at, reason)
            logger.warn('mail given up', { id: row.id, kind: row.kind, attempts: row.attempts, error: reason })
          }
        }
      }
      return rows.length
    },
  }
}
