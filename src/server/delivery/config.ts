/**
 * The delivery settings (`PLAZA_VAPID_*`, `PLAZA_PUSH_TTL`, `PLAZA_SMTP_URL`, `PLAZA_MAIL_*`,
 * `PLAZA_REQUIRE_VERIFIED_EMAIL`, `PLAZA_DELIVERY_POLL`), read once at start-up by loadConfig: a
 * mistake stops the start with one line naming the variable. docs/push-email-2fa.md.
 */
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { ConfigError, parseDuration } from '../config-parse.js'
import { isKeyPair } from './vapid.js'

export interface DeliveryConfig {
  /** How often each process's senders look for due push deliveries and mail (`PLAZA_DELIVERY_POLL`, default 1 s). */
  pollMs: number
  push: PushConfig
  /** Null when `PLAZA_SMTP_URL` is not set: the routes that mail answer 503 saying what to set. */
  mail: MailConfig | null
  /** `PLAZA_REQUIRE_VERIFIED_EMAIL`: accounts must verify their address before anything but the account's own upkeep. */
  requireVerifiedEmail: boolean
}

export interface PushConfig {
  /** `PLAZA_VAPID_PUBLIC_KEY` and `PLAZA_VAPID_PRIVATE_KEY`, or null: a pair is generated at the first start and kept in the database. */
  vapidKeys: { publicKey: string; privateKey: string } | null
  /**
   * The contact push services see in the VAPID token (`sub`): `PLAZA_VAPID_SUBJECT`, else an https
   * `PLAZA_PUBLIC_URL`, else `mailto:` the address of `PLAZA_MAIL_FROM`; null when none is set (push
   * subscriptions then answer 503 saying so).
   */
  subject: string | null
  /** How long a push service keeps a message for an offline device (`PLAZA_PUSH_TTL`, default 48 h, Mastodon's). */
  ttlSeconds: number
}

export interface MailConfig {
  /** `smtp://user:pass@host:587` or `smtps://...:465`; nodemailer's URL form. Never logged. */
  smtpUrl: string
  /** `PLAZA_MAIL_FROM`: `Plaza <no-reply@example.com>` or a bare address. */
  from: string
  /** `PLAZA_MAIL_TEMPLATES`: a directory whose files replace the built-in templates (delivery/templates.ts). */
  templatesDir: string | null
  /**
   * Where the links in mail point, with `{token}` for the secret: `PLAZA_PASSWORD_RESET_URL` and
   * `PLAZA_VERIFY_EMAIL_URL` (an app's universal link, say), by default the pages Plaza serves under
   * PLAZA_PUBLIC_URL. Never the request's Host header, which a caller chooses.
   */
  resetUrl: string | null
  verifyUrl: string | null
}

const DEFAULT_POLL_MS = 1000
const DEFAULT_PUSH_TTL_S = 48 * 3600
/** RFC 8030 §5.2 puts no ceiling on TTL; push services cap it at about four weeks (FCM: 28 days). */
const MAX_PUSH_TTL_S = 28 * 24 * 3600

const BASE64URL = /^[A-Za-z0-9_-]+$/

/** The address inside `Name <addr>` or a bare `addr`, or null when there is none. */
export function mailAddress(from: string): string | null {
  const match = /<([^<>\s]+@[^<>\s]+)>\s*$/.exec(from) ?? /^\s*([^<>\s]+@[^<>\s]+)\s*$/.exec(from)
  return match ? match[1] : null
}

function parseVapidKeys(env: NodeJS.ProcessEnv): PushConfig['vapidKeys'] {
  const publicKey = env.PLAZA_VAPID_PUBLIC_KEY?.trim() ?? ''
  const privateKey = env.PLAZA_VAPID_PRIVATE_KEY?.trim() ?? ''
  if (!publicKey && !privateKey) return null
  if (!publicKey || !privateKey) throw new ConfigError('PLAZA_VAPID_PUBLIC_KEY and PLAZA_VAPID_PRIVATE_KEY go together: set both, or neither (a pair is then generated and kept in the database)')
  if (!BASE64URL.test(publicKey) || Buffer.from(publicKey, 'base64url').length !== 65) {
    throw new ConfigError('PLAZA_VAPID_PUBLIC_KEY must be an uncompressed P-256 public key, 65 bytes in base64url (npx web-push generate-vapid-keys makes a pair)')
  }
  // The private key's value never goes into a message.
  if (!BASE64URL.test(privateKey) || Buffer.from(privateKey, 'base64url').length !== 32) {
    throw new ConfigError('PLAZA_VAPID_PRIVATE_KEY must be a P-256 private key, 32 bytes in base64url')
  }
  if (!isKeyPair({ publicKey, privateKey })) throw new ConfigError('PLAZA_VAPID_PUBLIC_KEY is not the public key of PLAZA_VAPID_PRIVATE_KEY: set the two halves of one pair')
  return { publicKey, privateKey }
}

/** An https: URL or a mailto: address, as RFC 8292 §2.1 asks of `sub`; `localhost` is refused, as Apple's push service refuses it. */
export function checkVapidSubject(subject: string): string {
  let url: URL
  try {
    url = new URL(subject)
  } catch {
    throw new ConfigError(`PLAZA_VAPID_SUBJECT must be a mailto: address or an https: URL, not "${subject}"`)
  }
  if (url.protocol !== 'mailto:' && url.protocol !== 'https:') throw new ConfigError(`PLAZA_VAPID_SUBJECT must be a mailto: address or an https: URL, not "${subject}"`)
  if (url.protocol === 'mailto:' ? !/^[^@\s]+@[^@\s]+$/.test(url.pathname) : !url.hostname) throw new ConfigError(`PLAZA_VAPID_SUBJECT: "${subject}" names no contact`)
  if (url.hostname === 'localhost' || /@localhost$/i.test(url.pathname)) throw new ConfigError('PLAZA_VAPID_SUBJECT must not be at localhost: push services refuse it')
  return subject
}

function vapidSubject(env: NodeJS.ProcessEnv, publicUrl: string | undefined, from: string | null): string | null {
  const set = env.PLAZA_VAPID_SUBJECT?.trim()
  if (set) return checkVapidSubject(set)
  if (publicUrl?.startsWith('https://') && !/^https:\/\/localhost[:/]?/.test(publicUrl)) return publicUrl
  const address = from ? mailAddress(from) : null
  return address && !/@localhost$/i.test(address) ? `mailto:${address}` : null
}

function linkTemplate(name: string, value: string | undefined): string | null {
  const text = value?.trim() ?? ''
  if (!text) return null
  if (!text.includes('{token}')) throw new ConfigError(`${name} must contain {token}, where the link's secret goes`)
  let url: URL
  try {
    url = new URL(text.replace('{token}', 'x'))
  } catch {
    throw new ConfigError(`${name} must be a URL with {token} in it, not "${text}"`)
  }
  if (url.protocol === 'javascript:' || url.protocol === 'data:') throw new ConfigError(`${name} must be a link an app or a browser opens, not ${url.protocol}`)
  return text
}

function parseFlag(name: string, value: string | undefined): boolean {
  const text = value?.trim().toLowerCase() ?? ''
  if (['', '0', 'false', 'no', 'off'].includes(text)) return false
  if (['1', 'true', 'yes', 'on'].includes(text)) return true
  throw new ConfigError(`${name} must be 1 or 0, not "${value}"`)
}

function parseMailConfig(env: NodeJS.ProcessEnv, publicUrl: string | undefined): MailConfig | null {
  const smtpUrl = env.PLAZA_SMTP_URL?.trim() ?? ''
  const from = env.PLAZA_MAIL_FROM?.trim() ?? ''
  if (!smtpUrl) {
    if (from) throw new ConfigError('PLAZA_MAIL_FROM is set but PLAZA_SMTP_URL is not: set the SMTP server too (smtp://user:password@host:587)')
    return null
  }
  let url: URL
  try {
    url = new URL(smtpUrl)
  } catch {
    // The URL may carry a password: it is not quoted.
    throw new ConfigError('PLAZA_SMTP_URL must be a URL such as smtp://user:password@host:587 or smtps://user:password@host:465')
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
    throw new ConfigError('PLAZA_SMTP_URL must be an smtp:// or smtps:// URL with a host, such as smtp://user:password@host:587')
  }
  if (!from) throw new ConfigError('PLAZA_SMTP_URL is set but PLAZA_MAIL_FROM is not: set the sender, e.g. "Plaza <no-reply@example.com>"')
  if (!mailAddress(from)) throw new ConfigError(`PLAZA_MAIL_FROM must be an address or "Name <address>", not "${from}"`)
  const resetUrl = linkTemplate('PLAZA_PASSWORD_RESET_URL', env.PLAZA_PASSWORD_RESET_URL)
  const verifyUrl = linkTemplate('PLAZA_VERIFY_EMAIL_URL', env.PLAZA_VERIFY_EMAIL_URL)
  if (!publicUrl && (!resetUrl || !verifyUrl)) {
    throw new ConfigError('mail needs PLAZA_PUBLIC_URL (or both PLAZA_PASSWORD_RESET_URL and PLAZA_VERIFY_EMAIL_URL): the links it sends must not be built from the Host header a caller sends')
  }
  const templatesDir = env.PLAZA_MAIL_TEMPLATES?.trim() ? path.resolve(env.PLAZA_MAIL_TEMPLATES.trim()) : null
  if (templatesDir && !(existsSync(templatesDir) && statSync(templatesDir).isDirectory())) throw new ConfigError(`PLAZA_MAIL_TEMPLATES: ${templatesDir} is not a directory`)
  return { smtpUrl, from, templatesDir, resetUrl, verifyUrl }
}

export function parseDeliveryConfig(env: NodeJS.ProcessEnv, publicUrl: string | undefined): DeliveryConfig {
  const pollMs = parseDuration('PLAZA_DELIVERY_POLL', env.PLAZA_DELIVERY_POLL, DEFAULT_POLL_MS)
  if (pollMs < 10 || pollMs > 60_000) throw new ConfigError('PLAZA_DELIVERY_POLL must be from 10 ms to 60 s')
  const ttlSeconds = Math.round(parseDuration('PLAZA_PUSH_TTL', env.PLAZA_PUSH_TTL, DEFAULT_PUSH_TTL_S * 1000, 's') / 1000)
  if (ttlSeconds < 0 || ttlSeconds > MAX_PUSH_TTL_S) throw new ConfigError('PLAZA_PUSH_TTL must be from 0 to 28 days')
  const mail = parseMailConfig(env, publicUrl)
  const requireVerifiedEmail = parseFlag('PLAZA_REQUIRE_VERIFIED_EMAIL', env.PLAZA_REQUIRE_VERIFIED_EMAIL)
  if (requireVerifiedEmail && !mail) throw new ConfigError('PLAZA_REQUIRE_VERIFIED_EMAIL needs mail to send the links: set PLAZA_SMTP_URL and PLAZA_MAIL_FROM')
  return {
    pollMs,
    push: { vapidKeys: parseVapidKeys(env), subject: vapidSubject(env, publicUrl, mail?.from ?? null), ttlSeconds },
    mail,
    requireVerifiedEmail,
  }
}
