/**
 * Single-use secrets: the tokens mailed for a password reset or an email verification
 * (`account_tokens`) and the challenge of a two-factor login (`login_challenges`). Only their
 * SHA-256 is stored (like session tokens), they expire, and using one marks it used in the
 * transaction that acts on it, so a second use (or a concurrent one) finds nothing.
 */
import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db, ReadDb, Tx } from '../db/client.js'
import { hashToken } from './sessions.js'

export type AccountTokenPurpose = 'password_reset' | 'verify_email'

/** How long a mailed link works: a reset half an hour (issue 48), a verification a day (it may wait in an inbox). */
export const TOKEN_TTL_MS: Record<AccountTokenPurpose, number> = { password_reset: 30 * 60_000, verify_email: 24 * 3600_000 }

/**
 * 256 random bits, base64url (43 characters): what goes in a mailed link, and what a user pastes
 * after `plaza social email verify` or `password reset`. Never one that starts with `-`, which a
 * command line reads as a flag (one secret in 64 did): such draws are drawn again.
 */
export function newSecret(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const secret = random(32).toString('base64url')
    if (!secret.startsWith('-')) return secret
  }
}

/**
 * Makes a token for `userId` and stores its hash, in the caller's transaction; earlier unused
 * tokens of the same purpose stop working (the newest mail is the one that counts).
 */
export async function issueAccountToken(
  tx: Db | Tx,
  token: { userId: number; purpose: AccountTokenPurpose; email: string },
  now: Date,
): Promise<{ secret: string; expiresAt: number }> {
  const secret = newSecret()
  const expiresAt = now.getTime() + TOKEN_TTL_MS[token.purpose]
  await tx.run(sql`delete from account_tokens where user_id = ${token.userId} and purpose = ${token.purpose}`)
  await tx.run(sql`
    insert into account_tokens (user_id, purpose, token_hash, email, created_at, expires_at)
    values (${token.userId}, ${token.purpose}, ${hashToken(secret)}, ${token.email}, ${now.getTime()}, ${expiresAt})`)
  return { secret, expiresAt }
}

/** Whether `secret` is a live token of `purpose` (a read: for a page that only shows a form). */
export async function isLiveAccountToken(db: ReadDb, secret: string, purpose: AccountTokenPurpose, now: Date): Promise<boolean> {
  const rows = await db.values(sql`
    select 1 from account_tokens where token_hash = ${hashToken(secret)} and purpose = ${purpose} and used_at is null and expires_at > ${now.getTime()}`)
  return rows.length > 0
}

/** Uses up a live token of `purpose` in the caller's transaction: whose it is and the address it was mailed to, or null. */
export async function consumeAccountToken(tx: Db | Tx, secret: string, purpose: AccountTokenPurpose, now: Date): Promise<{ userId: number; email: string } | null> {
  const [row] = await tx.all<{ userId: number; email: string }>(sql`
    update account_tokens set used_at = ${now.getTime()}
    where token_hash = ${hashToken(secret)} and purpose = ${purpose} and used_at is null and expires_at > ${now.getTime()}
    returning user_id as userId, email`)
  return row ?? null
}
