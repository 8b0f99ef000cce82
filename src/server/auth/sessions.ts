import { createHash, randomBytes } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { Db, ReadDb, Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { sessions, users } from '../db/schema.js'

export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000
const TOKEN_PREFIX = 'plz_'

/** Tokens are 256 random bits; only their SHA-256 is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

export interface IssuedSession {
  token: string
  expiresAt: number
}

/** A User-Agent longer than this is cut: it is shown in a list, and nothing needs more. */
const USER_AGENT_MAX = 300

/** Opens a session; `userAgent` is the client's, shown in the owner's session list. */
export async function issueSession(db: Db | Tx, userId: number, now: Date, userAgent = ''): Promise<IssuedSession> {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url')
  const expiresAt = now.getTime() + SESSION_TTL_MS
  await db.insert(sessions).values({
    userId,
    tokenHash: hashToken(token),
    createdAt: now.getTime(),
    expiresAt,
    userAgent: userAgent.slice(0, USER_AGENT_MAX),
    lastUsedAt: now.getTime(),
  })
  return { token, expiresAt }
}

export type AuthUser = typeof users.$inferSelect

export const SUSPENDED_MESSAGE = 'This account has been suspended'

/**
 * Refuses (403) a suspended user. Their sessions are kept, not revoked, so that `plaza admin
 * unsuspend` restores access without making them log in again on every device.
 */
export function assertNotSuspended(user: Pick<AuthUser, 'suspendedAt'>): void {
  if (user.suspendedAt !== null) throw new TRPCError({ code: 'FORBIDDEN', message: SUSPENDED_MESSAGE })
}

/** The live session with this token hash at `now`, and its user: one probe of `sessions_token_hash_idx` and one of the users key. */
const liveSession = prepared((db) =>
  db
    .select({ sessionId: sessions.id, lastUsedAt: sessions.lastUsedAt, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, sql.placeholder('hash')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql.placeholder('now'))))
    .limit(1)
    .prepare(),
)

/**
 * The user behind a live (unexpired, unrevoked) token, or null. Runs on every authenticated request,
 * so callers pass `services.reads` (a revocation or a new session is committed before its answer is
 * sent) and the query is prepared once rather than built each time.
 */
export async function resolveSession(
  db: ReadDb,
  token: string,
  now: Date,
): Promise<{ sessionId: number; lastUsedAt: number | null; user: AuthUser } | null> {
  return (await liveSession(db).get({ hash: hashToken(token), now: now.getTime() })) ?? null
}

/** `last_used_at` is kept to about this precision, so a busy session costs one write a minute, not one a request. */
const LAST_USED_PRECISION_MS = 60_000

/** How often a serving process writes the last uses it noted. */
export const SESSION_TOUCH_FLUSH_MS = 10_000

/**
 * Last uses written per statement. Each statement runs on the event loop and holds the write lock:
 * on the 1M-post network a flush of every session a benchmark round touched, in one statement,
 * took 61-70 ms, during which the process answered nothing and no process wrote. A few hundred
 * take a few milliseconds, and requests are served between them.
 */
export const SESSION_TOUCH_CHUNK = 256

/**
 * Sessions' last uses, written in batches. The request path only notes a session whose stored
 * time is older than LAST_USED_PRECISION_MS (the resolved row says so without another read);
 * `flush` writes every noted one, SESSION_TOUCH_CHUNK per statement in session id order (the
 * table's order) with a turn of the event loop between statements, every SESSION_TOUCH_FLUSH_MS
 * while serving and on close. A write per request that needs one would take the write lock on the
 * read path (with `--workers N`, across processes); this is a few writes per process per interval,
 * whatever the traffic. A stored time never moves back, so processes sharing the database can
 * flush in any order.
 */
export interface SessionTouches {
  note(session: { sessionId: number; lastUsedAt: number | null }, now: Date): void
  flush(): Promise<void>
  close(): Promise<void>
}

export function createSessionTouches(
  db: Db,
  options: { background: boolean; onError: (error: unknown) => void; chunk?: number },
): SessionTouches {
  const chunk = options.chunk ?? SESSION_TOUCH_CHUNK
  let pending = new Map<number, number>()
  const write = (touches: Array<[number, number]>) =>
    db.run(sql`
      update ${sessions} set last_used_at = t.at
      from (select value ->> 0 as id, value ->> 1 as at from json_each(${JSON.stringify(touches)})) as t
      where ${sessions.id} = t.id and (${sessions.lastUsedAt} is null or ${sessions.lastUsedAt} < t.at)`)
  const flush = async () => {
    if (pending.size === 0) return
    const touches = [...pending].sort((a, b) => a[0] - b[0])
    pending = new Map()
    for (let start = 0; start < touches.length; start += chunk) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve))
      await write(touches.slice(start, start + chunk))
    }
  }
  const timer = options.background ? setInterval(() => void flush().catch(options.onError), SESSION_TOUCH_FLUSH_MS).unref() : null
  return {
    note(session, now) {
      if (session.lastUsedAt !== null && session.lastUsedAt > now.getTime() - LAST_USED_PRECISION_MS) return
      pending.set(session.sessionId, now.getTime())
    },
    flush,
    async close() {
      if (timer) clearInterval(timer)
      await flush().catch(options.onError)
    },
  }
}

/** Revokes one session; returns false when it was already revoked (a concurrent logout or refresh won). */
export async function revokeSession(db: Db | Tx, sessionId: number, now: Date): Promise<boolean> {
  const result = await db
    .update(sessions)
    .set({ revokedAt: now.getTime() })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id })
  return result.length > 0
}
