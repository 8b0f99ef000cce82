/** The account's own security: its live sessions, revoking one, and changing the password. */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { SessionInfo } from '../../shared/types.js'
import { hashPassword, verifyPassword } from '../auth/passwords.js'
import type { AuthUser } from '../auth/sessions.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { wrongPassword } from '../errors.js'

/** A wrong password on an authenticated call is a 403: the token is fine, the proof of identity is not. */
export async function assertPassword(passwordHash: string, password: string): Promise<void> {
  if (!(await verifyPassword(password, passwordHash))) throw wrongPassword('FORBIDDEN', 'Wrong password')
}

/** The caller's live sessions, newest first (a range of `sessions_user_idx`); tokens and hashes never leave the table. */
export async function listSessions(db: ReadDb, userId: number, currentId: number, now: Date): Promise<{ sessions: SessionInfo[] }> {
  const rows = await db.values<[number, string, number, number | null]>(sql`
    select id, user_agent, created_at, last_used_at from sessions
    where user_id = ${userId} and revoked_at is null and expires_at > ${now.getTime()}
    order by created_at desc, id desc`)
  return {
    sessions: rows.map((row) => ({
      id: row[0],
      user_agent: row[1],
      created_at: formatDateTime(row[2]),
      last_used_at: row[3] === null ? null : formatDateTime(row[3]),
      current: row[0] === currentId,
    })),
  }
}

/** Revokes one of the caller's live sessions (the current one too: that logs out); anyone else's, or a dead one, is a 404. */
export async function revokeOwnSession(db: Db, userId: number, sessionId: number, now: Date): Promise<null> {
  const result = await db.run(sql`
    update sessions set revoked_at = ${now.getTime()}
    where id = ${sessionId} and user_id = ${userId} and revoked_at is null and expires_at > ${now.getTime()}`)
  if (result.rowsAffected === 0) throw new TRPCError({ code: 'NOT_FOUND', message: 'Session not found' })
  return null
}

/**
 * Changes the password after checking the current one (403 when wrong), and revokes every other
 * live session of the account in the same transaction; the calling one stays.
 */
export async function changePassword(
  db: Db,
  user: AuthUser,
  currentSessionId: number,
  input: { current_password: string; new_password: string },
  now: Date,
): Promise<{ revoked_sessions: number }> {
  // Read now, not from the request's session: the session cache keeps no password hash, and a
  // password changed since the token was resolved must be the one checked.
  const [stored] = await db.values<[string]>(sql`select password_hash from users where id = ${user.id}`)
  if (!stored) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' })
  await assertPassword(stored[0], input.current_password)
  // scrypt runs before the write lock is taken, never under it.
  const passwordHash = await hashPassword(input.new_password)
  return writeTransaction(db, async (tx) => {
    await tx.run(sql`update users set password_hash = ${passwordHash} where id = ${user.id}`)
    const revoked = await tx.run(sql`
      update sessions set revoked_at = ${now.getTime()}
      where user_id = ${user.id} and id <> ${currentSessionId} and revoked_at is null and expires_at > ${now.getTime()}`)
    return { revoked_sessions: revoked.rowsAffected }
  })
}
