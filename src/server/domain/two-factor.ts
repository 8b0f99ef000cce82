/**
 * Two-factor login with TOTP (issue 48): set up (a secret, its otpauth:// URI and QR code), confirm
 * with the app's first code (which turns it on and hands out ten recovery codes), and from then on
 * a login with the right password answers a short-lived challenge instead of a session; the
 * session comes from `POST /auth/login/2fa` with a code or a recovery code. A code is accepted
 * within one step of clock drift and never twice (the last accepted step is kept); a recovery code
 * works once. Turning it off, or making new recovery codes, takes the password and a code.
 * docs/push-email-2fa.md.
 */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { Session } from '../../shared/types.js'
import { hashToken, issueSession, assertNotSuspended } from '../auth/sessions.js'
import { newSecret } from '../auth/tokens.js'
import { hashRecoveryCode, matchingStep, newRecoveryCodes, newTotpSecret, otpauthUrl } from '../auth/totp.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import type { Services } from '../services.js'
import { sessionOf } from './session-answer.js'
import { assertPassword } from './sessions.js'

/** How long the second step of a login may take, and how many wrong codes one challenge takes. */
export const CHALLENGE_TTL_MS = 5 * 60_000
export const CHALLENGE_MAX_ATTEMPTS = 5

export interface LoginChallenge {
  two_factor_required: true
  challenge_token: string
  expires_at: string
  methods: Array<'totp' | 'recovery_code'>
}

export interface TwoFactorStatus {
  enabled: boolean
  pending: boolean
  recovery_codes_left: number
}

/** A code from the app or a recovery code, as the input schemas give them (exactly one). */
export interface SecondFactor {
  code?: string
  recovery_code?: string
}

/**
 * How wrong codes are limited beyond one challenge's tries: `before` refuses (429) an account past
 * its limit before a code is checked, `failed` counts a wrong one. Built by the router from the
 * request's rate limiter (the `account` class, per account).
 */
export interface CodeAttempts {
  before(): Promise<void>
  failed(): Promise<void>
}

const WRONG_CODE = 'Wrong code'

/** The issuer an authenticator app shows: PLAZA_PUBLIC_URL's host, or Plaza. */
function issuerOf(services: Services): string {
  return services.config.publicUrl ? new URL(services.config.publicUrl).host : 'Plaza'
}

async function credentialOf(db: Db | Tx, userId: number) {
  const [row] = await db.all<{ secret: string; confirmed: number }>(sql`
    select secret, confirmed_at is not null as confirmed from totp_credentials where user_id = ${userId}`)
  return row ? { secret: row.secret, confirmed: row.confirmed === 1 } : null
}

/** Whether two-factor login is on for `userId` (login asks this after the password). */
export async function twoFactorEnabled(db: Db | Tx, userId: number): Promise<boolean> {
  return (await credentialOf(db, userId))?.confirmed === true
}

/**
 * Uses a second factor of `userId` in `tx`: a code for a step later than the last accepted one
 * (which then becomes the last), or an unused recovery code (then used). False when it is wrong,
 * or a code already used.
 */
async function useFactor(tx: Tx, userId: number, secret: string, factor: SecondFactor, now: Date): Promise<boolean> {
  if (factor.code !== undefined) {
    const step = matchingStep(secret, factor.code, now)
    if (step === null) return false
    const moved = await tx.run(sql`update totp_credentials set last_step = ${step} where user_id = ${userId} and last_step < ${step}`)
    return moved.rowsAffected === 1
  }
  if (factor.recovery_code === undefined) return false
  const used = await tx.run(sql`
    update recovery_codes set used_at = ${now.getTime()}
    where user_id = ${userId} and code_hash = ${hashRecoveryCode(factor.recovery_code)} and used_at is null`)
  return used.rowsAffected === 1
}

/** Replaces the account's recovery codes with ten new ones (in `tx`); answers them, the only time they are shown. */
async function replaceRecoveryCodes(tx: Tx, userId: number): Promise<{ recovery_codes: string[] }> {
  const codes = newRecoveryCodes()
  await tx.run(sql`delete from recovery_codes where user_id = ${userId}`)
  await tx.run(sql`
    insert into recovery_codes (user_id, code_hash)
    select ${userId}, value from json_each(${JSON.stringify(codes.map(hashRecoveryCode))})`)
  return { recovery_codes: codes }
}

export async function twoFactorStatus(db: ReadDb, userId: number): Promise<TwoFactorStatus> {
  const [row] = await db.all<{ confirmed: number | null; left: number }>(sql`
    select (select confirmed_at is not null from totp_credentials where user_id = ${userId}) as confirmed,
      (select count(*) from recovery_codes where user_id = ${userId} and used_at is null) as left`)
  return { enabled: row.confirmed === 1, pending: row.confirmed === 0, recovery_codes_left: row.confirmed === 1 ? row.left : 0 }
}

async function storedPassword(db: Db, userId: number): Promise<string> {
  const [row] = await db.values<[string]>(sql`select password_hash from users where id = ${userId}`)
  if (!row) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' })
  return row[0]
}

/**
 * Starts setting up two-factor login (after the password): a new secret, kept but not yet in force,
 * and what an authenticator app needs: the secret, its otpauth:// URI, and that URI as a QR code in
 * SVG and PNG. Setting up again before confirming replaces the secret. 409 when it is already on.
 */
export async function setUpTwoFactor(services: Services, user: { id: number; username: string }, password: string, now: Date) {
  await assertPassword(await storedPassword(services.db, user.id), password)
  const secret = newTotpSecret()
  const written = await services.db.run(sql`
    insert into totp_credentials (user_id, secret, created_at) values (${user.id}, ${secret}, ${now.getTime()})
    on conflict (user_id) do update set secret = excluded.secret, created_at = excluded.created_at, last_step = 0
    where totp_credentials.confirmed_at is null`)
  if (written.rowsAffected === 0) throw new TRPCError({ code: 'CONFLICT', message: 'Two-factor login is already on; turn it off first (POST /auth/2fa/disable)' })
  const url = otpauthUrl(secret, user.username, issuerOf(services))
  const { default: qrcode } = await import('qrcode')
  const [svg, png] = await Promise.all([
    qrcode.toString(url, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }),
    qrcode.toDataURL(url, { type: 'image/png', margin: 2, scale: 6, errorCorrectionLevel: 'M' }),
  ])
  return { secret, otpauth_url: url, qr_svg: svg, qr_png: png }
}

/** Turns two-factor login on with the app's first code; answers the ten recovery codes. */
export async function confirmTwoFactor(services: Services, userId: number, code: string, attempts: CodeAttempts, now: Date): Promise<{ recovery_codes: string[] }> {
  await attempts.before()
  const result = await writeTransaction(services.db, async (tx) => {
    const credential = await credentialOf(tx, userId)
    if (!credential) throw new TRPCError({ code: 'BAD_REQUEST', message: 'Set two-factor login up first (POST /auth/2fa/setup)' })
    if (credential.confirmed) throw new TRPCError({ code: 'CONFLICT', message: 'Two-factor login is already on' })
    if (!(await useFactor(tx, userId, credential.secret, { code }, now))) return null
    await tx.run(sql`update totp_credentials set confirmed_at = ${now.getTime()} where user_id = ${userId}`)
    return replaceRecoveryCodes(tx, userId)
  })
  if (result) return result
  await attempts.failed()
  throw new TRPCError({ code: 'BAD_REQUEST', message: 'That code does not match: enter the code the app shows now (and check the device clock)' })
}

/** The password and a second factor, for turning two-factor off or making new recovery codes; `act` runs in the same transaction. */
async function withProof<T>(services: Services, userId: number, proof: { password: string } & SecondFactor, attempts: CodeAttempts, now: Date, act: (tx: Tx) => Promise<T>): Promise<T> {
  await assertPassword(await storedPassword(services.db, userId), proof.password)
  await attempts.before()
  const result = await writeTransaction(services.db, async (tx) => {
    const credential = await credentialOf(tx, userId)
    if (!credential?.confirmed) throw new TRPCError({ code: 'CONFLICT', message: 'Two-factor login is not on' })
    if (!(await useFactor(tx, userId, credential.secret, proof, now))) return { ok: false as const }
    return { ok: true as const, value: await act(tx) }
  })
  if (result.ok) return result.value
  await attempts.failed()
  throw new TRPCError({ code: 'FORBIDDEN', message: WRONG_CODE })
}

/** Turns two-factor login off (the password and a code or a recovery code); the secret and the recovery codes go. */
export function disableTwoFactor(services: Services, userId: number, proof: { password: string } & SecondFactor, attempts: CodeAttempts, now: Date): Promise<TwoFactorStatus> {
  return withProof(services, userId, proof, attempts, now, async (tx) => {
    await tx.run(sql`delete from recovery_codes where user_id = ${userId}`)
    await tx.run(sql`delete from totp_credentials where user_id = ${userId}`)
    await tx.run(sql`delete from login_challenges where user_id = ${userId}`)
    return { enabled: false, pending: false, recovery_codes_left: 0 }
  })
}

/** Ten new recovery codes in place of the old ones (the password and a code or a recovery code). */
export function regenerateRecoveryCodes(services: Services, userId: number, proof: { password: string } & SecondFactor, attempts: CodeAttempts, now: Date): Promise<{ recovery_codes: string[] }> {
  return withProof(services, userId, proof, attempts, now, (tx) => replaceRecoveryCodes(tx, userId))
}

/**
 * The challenge a login answers when two-factor login is on (after the password): a token good for
 * CHALLENGE_TTL_MS and CHALLENGE_MAX_ATTEMPTS codes. The user's spent challenges are cleared here.
 */
export async function issueLoginChallenge(db: Db, userId: number, now: Date): Promise<LoginChallenge> {
  const token = newSecret()
  const expiresAt = now.getTime() + CHALLENGE_TTL_MS
  await writeTransaction(db, async (tx) => {
    await tx.run(sql`delete from login_challenges where user_id = ${userId} and (used_at is not null or expires_at <= ${now.getTime()})`)
    await tx.run(sql`
      insert into login_challenges (user_id, token_hash, created_at, expires_at) values (${userId}, ${hashToken(token)}, ${now.getTime()}, ${expiresAt})`)
  })
  return { two_factor_required: true, challenge_token: token, expires_at: formatDateTime(expiresAt), methods: ['totp', 'recovery_code'] }
}

const EXPIRED_CHALLENGE = 'This login has expired or was already finished: log in again with your password'

/**
 * `POST /auth/login/2fa`: the session for a live challenge and a right code (or recovery code). A
 * wrong one counts against the challenge (spent after CHALLENGE_MAX_ATTEMPTS) and the account, and
 * is a 401.
 */
export async function completeLogin(services: Services, input: { challenge_token: string } & SecondFactor, attempts: (userId: number) => CodeAttempts, now: Date, userAgent: string): Promise<Session> {
  const [challenge] = await services.db.all<{ id: number; userId: number }>(sql`
    select id, user_id as userId from login_challenges
    where token_hash = ${hashToken(input.challenge_token)} and used_at is null and expires_at > ${now.getTime()}`)
  if (!challenge) throw new TRPCError({ code: 'UNAUTHORIZED', message: EXPIRED_CHALLENGE })
  const limit = attempts(challenge.userId)
  await limit.before()
  const session = await writeTransaction(services.db, async (tx) => {
    const credential = await credentialOf(tx, challenge.userId)
    // Turned off since the password was checked: the challenge is void.
    if (!credential?.confirmed) throw new TRPCError({ code: 'UNAUTHORIZED', message: EXPIRED_CHALLENGE })
    if (!(await useFactor(tx, challenge.userId, credential.secret, input, now))) {
      await tx.run(sql`
        update login_challenges set attempts = attempts + 1,
          used_at = case when attempts + 1 >= ${CHALLENGE_MAX_ATTEMPTS} then ${now.getTime()} end
        where id = ${challenge.id}`)
      return null
    }
    const spent = await tx.run(sql`update login_challenges set used_at = ${now.getTime()} where id = ${challenge.id} and used_at is null`)
    if (spent.rowsAffected === 0) throw new TRPCError({ code: 'UNAUTHORIZED', message: EXPIRED_CHALLENGE })
    const [user] = await tx.all<{ id: number; username: string; email: string; emailVerifiedAt: number | null; fullName: string; avatar: string; suspendedAt: number | null }>(sql`
      select id, username, email, email_verified_at as emailVerifiedAt, full_name as fullName, avatar, suspended_at as suspendedAt from users where id = ${challenge.userId}`)
    assertNotSuspended(user)
    return sessionOf(tx, user, await issueSession(tx, user.id, now, userAgent))
  })
  if (session) return session
  await limit.failed()
  throw new TRPCError({ code: 'UNAUTHORIZED', message: WRONG_CODE })
}
