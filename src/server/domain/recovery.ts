/**
 * Account recovery and the account's email address (issue 48): a password reset by mail, email
 * verification (at registration, on request, and when the address changes), and changing the
 * address. Tokens are single-use, hashed at rest and expire (auth/tokens.ts); mail goes through
 * the outbox (delivery/mail.ts), never on the request path. docs/push-email-2fa.md.
 */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import type { ChangeEmailInput, ResetPasswordInput } from '../../shared/schemas/auth.js'
import { hashPassword } from '../auth/passwords.js'
import { consumeAccountToken, isLiveAccountToken, issueAccountToken, TOKEN_TTL_MS, type AccountTokenPurpose } from '../auth/tokens.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import type { Services } from '../services.js'
import { assertPassword } from './sessions.js'

export interface EmailState {
  email: string
  email_verified: boolean
  pending_email: string | null
}

/** The same words whether or not an account matched: the answer must not tell. */
export const FORGOT_MESSAGE = 'If an account matches, a link to reset its password has been mailed to its address'

const INVALID_RESET = 'This reset link is invalid, used or expired: ask for a new one'
const INVALID_VERIFY = 'This verification link is invalid, used or expired: ask for a new one'

/** The instance's name in mail: PLAZA_PUBLIC_URL's host. */
function instanceName(services: Services): string {
  const url = services.config.publicUrl
  return url ? new URL(url).host : 'Plaza'
}

/** Mails a token of `purpose` for `user` to `to`, in `tx` (the token and the message commit together). */
async function mailToken(services: Services, tx: Db | Tx, user: { id: number; username: string }, purpose: AccountTokenPurpose, to: string, now: Date) {
  const { secret, expiresAt } = await issueAccountToken(tx, { userId: user.id, purpose, email: to }, now)
  await services.delivery.mail.send(
    tx,
    {
      kind: purpose,
      userId: user.id,
      to,
      expiresAt,
      variables: {
        username: user.username,
        link: services.delivery.mail.link(purpose, secret),
        token: secret,
        expires_minutes: String(TOKEN_TTL_MS[purpose] / 60_000),
        instance: instanceName(services),
      },
    },
    now,
  )
}

/**
 * `POST /auth/password/forgot`: mails a reset link to the account named by email (or username), if
 * there is one and it is not suspended. The answer is the same either way, and so is its status.
 * `allowMail` counts a message against the account's limit (the `account` class); past it nothing
 * is sent, and the answer is still the same (a 429 would tell the account exists).
 */
export async function forgotPassword(services: Services, login: string, allowMail: (userId: number) => Promise<boolean>, now: Date): Promise<null> {
  services.delivery.mail.assertConfigured()
  const key = login.toLowerCase()
  const column = key.includes('@') ? sql`lower(email)` : sql`lower(username)`
  const [user] = await services.reads.all<{ id: number; username: string; email: string; suspended: number }>(sql`
    select id, username, email, suspended_at is not null as suspended from users where ${column} = ${key} limit 1`)
  if (!user || user.suspended || !(await allowMail(user.id))) return null
  await writeTransaction(services.db, (tx) => mailToken(services, tx, user, 'password_reset', user.email, now))
  return null
}

/**
 * `POST /auth/password/reset`: sets the new password with a mailed token and revokes every session
 * of the account (and so every push subscription), in one transaction; the token is then used. A
 * reset proves the owner reads mail at the address it went to: that address becomes verified.
 */
export async function resetPassword(services: Services, input: Required<ResetPasswordInput>, now: Date): Promise<{ revoked_sessions: number }> {
  // A cheap read first, so a wrong token costs no scrypt; the transaction below checks it again as it uses it.
  if (!(await isLiveAccountToken(services.db, input.token, 'password_reset', now))) throw new TRPCError({ code: 'BAD_REQUEST', message: INVALID_RESET })
  const passwordHash = await hashPassword(input.password)
  return writeTransaction(services.db, async (tx) => {
    const token = await consumeAccountToken(tx, input.token, 'password_reset', now)
    if (!token) throw new TRPCError({ code: 'BAD_REQUEST', message: INVALID_RESET })
    await tx.run(sql`
      update users set password_hash = ${passwordHash},
        email_verified_at = case when lower(email) = lower(${token.email}) then coalesce(email_verified_at, ${now.getTime()}) else email_verified_at end
      where id = ${token.userId}`)
    const revoked = await tx.run(sql`update sessions set revoked_at = ${now.getTime()} where user_id = ${token.userId} and revoked_at is null and expires_at > ${now.getTime()}`)
    // A login half-way through its second step was made with the old password.
    await tx.run(sql`delete from login_challenges where user_id = ${token.userId}`)
    return { revoked_sessions: revoked.rowsAffected }
  })
}

async function emailStateOf(db: Db | Tx | ReadDb, userId: number): Promise<EmailState> {
  const [row] = await db.all<{ email: string; verified: number; pending: string | null }>(sql`
    select email, email_verified_at is not null as verified, pending_email as pending from users where id = ${userId}`)
  if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: 'User not found' })
  return { email: row.email, email_verified: row.verified === 1, pending_email: row.pending }
}

/** Which unique index a failed write ran into: the email's means the address is someone else's now. */
const emailTaken = (error: unknown) => /users_email_lower_idx/.test(`${(error as Error)?.message} ${(error as { cause?: Error })?.cause?.message ?? ''}`)
const TAKEN = () => new TRPCError({ code: 'CONFLICT', message: 'email is already registered' })

/**
 * `POST /auth/email/verify`: a mailed verification token proves the address it went to. The
 * account's address becomes verified, or, when it was the pending new one, becomes the account's
 * address (409 if another account took it meanwhile).
 */
export async function verifyEmail(services: Services, token: string, now: Date): Promise<EmailState> {
  try {
    return await writeTransaction(services.db, async (tx) => {
      const found = await consumeAccountToken(tx, token, 'verify_email', now)
      if (!found) throw new TRPCError({ code: 'BAD_REQUEST', message: INVALID_VERIFY })
      const changed = await tx.run(sql`
        update users set
          email = case when lower(pending_email) = lower(${found.email}) then pending_email else email end,
          pending_email = case when lower(pending_email) = lower(${found.email}) then null else pending_email end,
          email_verified_at = ${now.getTime()}
        where id = ${found.userId} and (lower(email) = lower(${found.email}) or lower(pending_email) = lower(${found.email}))`)
      if (changed.rowsAffected === 0) throw new TRPCError({ code: 'BAD_REQUEST', message: 'This link is for an address the account no longer uses' })
      return emailStateOf(tx, found.userId)
    })
  } catch (error) {
    if (emailTaken(error)) throw TAKEN()
    throw error
  }
}

/**
 * `POST /auth/email/resend`: mails a new verification link for the pending address, or the
 * unverified one (409 when there is nothing to verify). The caller counts it against the account's limit.
 */
export async function resendVerification(services: Services, user: { id: number; username: string }, now: Date): Promise<null> {
  services.delivery.mail.assertConfigured()
  const state = await emailStateOf(services.db, user.id)
  const to = state.pending_email ?? (state.email_verified ? null : state.email)
  if (!to) throw new TRPCError({ code: 'CONFLICT', message: 'Your email address is already verified' })
  await writeTransaction(services.db, (tx) => mailToken(services, tx, user, 'verify_email', to, now))
  return null
}

/** Mails the verification link of a new account (registration), in its transaction; nothing without mail. */
export async function mailNewAccountVerification(services: Services, tx: Tx, user: { id: number; username: string; email: string }, now: Date): Promise<void> {
  if (!services.delivery.mail.configured) return
  await mailToken(services, tx, user, 'verify_email', user.email, now)
}

/**
 * `PUT /user/email`: changes the account's address, after the password. With mail, the new
 * address is only pending until the link mailed to it is opened (a typo cannot lock the owner out,
 * nor hand the account to whoever owns the typo); without mail it changes at once, unverified. The
 * caller counts it against the account's limit.
 */
export async function changeEmail(services: Services, user: { id: number; username: string }, input: Required<ChangeEmailInput>, now: Date): Promise<EmailState> {
  const [row] = await services.db.all<{ hash: string; email: string }>(sql`select password_hash as hash, email from users where id = ${user.id}`)
  if (!row) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' })
  await assertPassword(row.hash, input.password)
  if (row.email.toLowerCase() === input.email.toLowerCase()) throw new TRPCError({ code: 'BAD_REQUEST', message: 'email is already the address of this account' })
  const [taken] = await services.db.values(sql`select 1 from users where lower(email) = lower(${input.email}) and id <> ${user.id}`)
  if (taken) throw TAKEN()
  try {
    if (services.delivery.mail.configured) {
      return await writeTransaction(services.db, async (tx) => {
        await tx.run(sql`update users set pending_email = ${input.email} where id = ${user.id}`)
        await mailToken(services, tx, user, 'verify_email', input.email, now)
        return emailStateOf(tx, user.id)
      })
    }
    return await writeTransaction(services.db, async (tx) => {
      await tx.run(sql`update users set email = ${input.email}, email_verified_at = null, pending_email = null where id = ${user.id}`)
      await tx.run(sql`delete from account_tokens where user_id = ${user.id} and purpose = 'verify_email'`)
      return emailStateOf(tx, user.id)
    })
  } catch (error) {
    if (emailTaken(error)) throw TAKEN()
    throw error
  }
}

/** The caller's address and whether it is verified (`GET /user/email`). */
export function emailState(services: Services, userId: number): Promise<EmailState> {
  return emailStateOf(services.reads, userId)
}
