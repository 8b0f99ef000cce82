import { TRPCError } from '@trpc/server'
import { eq, sql } from 'drizzle-orm'
import type { LoginInput, RegisterInput } from '../../shared/schemas/auth.js'
import type { Session } from '../../shared/types.js'
import { decoyHash, hashPassword, verifyPassword } from '../auth/passwords.js'
import { assertNotSuspended, hashToken, issueSession, revokeSession, type AuthUser } from '../auth/sessions.js'
import { writeTransaction, type Db, type Tx } from '../db/client.js'
import { wrongPassword } from '../errors.js'
import { users } from '../db/schema.js'
import { sessionOf } from './session-answer.js'
import { issueLoginChallenge, twoFactorEnabled, type LoginChallenge } from './two-factor.js'


/** Which unique index a failed insert ran into, if any (the message also quotes the SQL, so match index names). */
function uniqueViolation(error: unknown): 'username' | 'email' | null {
  const text = `${(error as Error)?.message} ${(error as { cause?: Error })?.cause?.message ?? ''}`
  if (!/UNIQUE constraint failed/i.test(text)) return null
  if (/users_username_lower_idx/.test(text)) return 'username'
  if (/users_email_lower_idx/.test(text)) return 'email'
  return null
}

/**
 * Creates the account and logs it in at once (decisions §2: register returns a Session). `created`
 * runs in the same transaction (the verification mail, when mail is set up).
 */
export async function registerAccount(
  db: Db,
  input: Required<RegisterInput>,
  now: Date,
  userAgent = '',
  created?: (tx: Tx, user: { id: number; username: string; email: string }) => Promise<void>,
): Promise<Session> {
  const passwordHash = await hashPassword(input.password)
  try {
    return await writeTransaction(db, async (tx) => {
      const [user] = await tx
        .insert(users)
        .values({ username: input.username, email: input.email, fullName: input.full_name, passwordHash, createdAt: now.getTime() })
        .returning()
      await created?.(tx, user)
      return sessionOf(tx, user, await issueSession(tx, user.id, now, userAgent))
    })
  } catch (error) {
    const field = uniqueViolation(error)
    if (field === 'username') throw new TRPCError({ code: 'CONFLICT', message: 'username is already taken' })
    if (field === 'email') throw new TRPCError({ code: 'CONFLICT', message: 'email is already registered' })
    throw error
  }
}

/**
 * The key failed logins against this login name are counted under (the `auth` class): the
 * account's id, so an email and a username of one account share a count, or the name itself when
 * no account has it (so that guessing at a name gives away nothing).
 */
export async function loginAccountKey(db: Db, login: string): Promise<string> {
  const name = login.trim().toLowerCase()
  const column = name.includes('@') ? users.email : users.username
  const [user] = await db.select({ id: users.id }).from(users).where(eq(sql`lower(${column})`, name)).limit(1)
  return user ? `account:${user.id}` : `login:${name}`
}

/**
 * Checks the password of the account named by email (or username) and opens a new session; with
 * two-factor login on, answers a challenge instead (domain/two-factor.ts), which a code turns into
 * the session.
 */
export async function logIn(db: Db, input: Required<LoginInput>, now: Date, userAgent = ''): Promise<Session | LoginChallenge> {
  const login = input.email.toLowerCase()
  const column = login.includes('@') ? users.email : users.username
  const [user] = await db
    .select()
    .from(users)
    .where(eq(sql`lower(${column})`, login))
    .limit(1)
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await decoyHash()))
  if (!user || !ok) throw wrongPassword('UNAUTHORIZED', 'Invalid email or password')
  // Only after the password: a guesser learns nothing about the account from the 403.
  assertNotSuspended(user)
  if (await twoFactorEnabled(db, user.id)) return issueLoginChallenge(db, user.id, now)
  return sessionOf(db, user, await issueSession(db, user.id, now, userAgent))
}

export async function logOut(db: Db, sessionId: number, now: Date): Promise<null> {
  await revokeSession(db, sessionId, now)
  return null
}

/** Replaces the caller's session with a new one (its push subscription too); the old token stops working. */
export async function refreshSession(db: Db, user: AuthUser, sessionId: number, now: Date, userAgent = ''): Promise<Session> {
  return writeTransaction(db, async (tx) => {
    const issued = await issueSession(tx, user.id, now, userAgent)
    // The session's push subscription moves to the new one, before the revocation's trigger would delete it.
    await tx.run(sql`update push_subscriptions set session_id = (select id from sessions where token_hash = ${hashToken(issued.token)}) where session_id = ${sessionId}`)
    if (!(await revokeSession(tx, sessionId, now))) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' })
    return sessionOf(tx, user, issued)
  })
}
