import { createHash, randomBytes } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { Db, ReadDb, Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { authEpoch, sessions, users } from '../db/schema.js'

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

/**
 * The caller as a request sees it: the user's identity, never their counters (which change on every
 * follow and post) or password hash. Exactly the columns whose change bumps `auth_epoch` (migration
 * 0015), so a cached one is never stale.
 */
export type AuthUser = Pick<typeof users.$inferSelect, 'id' | 'username' | 'email' | 'fullName' | 'avatar' | 'suspendedAt' | 'emailVerifiedAt'>

const AUTH_USER = {
  id: users.id,
  username: users.username,
  email: users.email,
  fullName: users.fullName,
  avatar: users.avatar,
  suspendedAt: users.suspendedAt,
  emailVerifiedAt: users.emailVerifiedAt,
}

export const SUSPENDED_MESSAGE = 'This account has been suspended'

/**
 * Refuses (403) a suspended user. Their sessions are kept, not revoked, so that `plaza admin
 * unsuspend` restores access without making them log in again on every device.
 */
export function assertNotSuspended(user: Pick<AuthUser, 'suspendedAt'>): void {
  if (user.suspendedAt !== null) throw new TRPCError({ code: 'FORBIDDEN', message: SUSPENDED_MESSAGE })
}

export interface ResolvedSession {
  sessionId: number
  lastUsedAt: number | null
  expiresAt: number
  user: AuthUser
}

/**
 * The live session with this token hash at `now`, its user, and `auth_epoch`'s generation, all from
 * one snapshot (one statement): one probe of `sessions_token_hash_idx`, one of the users key, one of
 * `auth_epoch`.
 */
const liveSession = prepared((db) =>
  db
    .select({
      sessionId: sessions.id,
      lastUsedAt: sessions.lastUsedAt,
      expiresAt: sessions.expiresAt,
      user: AUTH_USER,
      generation: sql<number>`(select ${authEpoch.generation} from ${authEpoch} where ${authEpoch.id} = 1)`,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, sql.placeholder('hash')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql.placeholder('now'))))
    .limit(1)
    .prepare(),
)

const currentGeneration = prepared((db) =>
  db
    .select({ generation: authEpoch.generation })
    .from(authEpoch)
    .where(eq(authEpoch.id, 1))
    .prepare(),
)

/**
 * The user behind a live (unexpired, unrevoked) token, or null, read from the database. Requests go
 * through a `SessionCache`, which calls this on a miss; the embedded CLI calls it once.
 */
export async function resolveSession(db: ReadDb, token: string, now: Date): Promise<ResolvedSession | null> {
  const row = await liveSession(db).get({ hash: hashToken(token), now: now.getTime() })
  if (!row) return null
  const { generation: _, ...session } = row
  return session
}

/** Sessions a process keeps resolved; beyond this, the one kept longest goes. */
const SESSION_CACHE_CAPACITY = 50_000

/**
 * The sessions this process has resolved, by token hash, trusted while `auth_epoch`'s generation
 * stands still. Every authenticated request resolves its token, and on the 1M-post network the
 * probe of `sessions` and `users` took about 9% of a process's time in a like round: each
 * commit by another connection (the other `plaza serve` process, this process's own writes) empties
 * SQLite's page cache, so every lookup read about nine pages again. Reading the generation is one
 * small page.
 *
 * Exact, not eventually so: anything that could change an answer (a logout, a refresh, a password
 * change or a session's deletion revoking a token, a suspension, an account deleted, a username,
 * email, full name or avatar changed) bumps the generation in its own transaction (triggers,
 * migration 0015), and the generation is read on the request's own turn from the same read
 * connection the lookup would have used, after the write committed. Expiry is checked here against
 * the cached `expiresAt`. A miss reads the session and the generation in one statement, and keeps
 * the session only if that generation is the one the cache holds.
 */
export class SessionCache {
  #generation: number | null = null
  readonly #sessions = new Map<string, ResolvedSession>()
  /** Lookups that went to `sessions` (for tests and the benchmark's notes). */
  misses = 0

  constructor(
    private readonly db: ReadDb,
    private readonly capacity = SESSION_CACHE_CAPACITY,
  ) {}

  async resolve(token: string, now: Date): Promise<ResolvedSession | null> {
    const hash = hashToken(token)
    const cached = this.#sessions.get(hash)
    if (cached) {
      const current = await currentGeneration(this.db).get()
      if (current?.generation === this.#generation && cached.expiresAt > now.getTime()) return cached
      this.#sessions.delete(hash)
    }
    // A miss costs what a lookup cost without the cache: one statement, which also says the generation.
    this.misses++
    const row = await liveSession(this.db).get({ hash, now: now.getTime() })
    if (!row) return null
    const { generation, ...session } = row
    if (this.#generation === null || generation > this.#generation) {
      // Something changed since the sessions kept were read: none of them can be trusted.
      this.#sessions.clear()
      this.#generation = generation
    }
    // Kept only if read at the generation the cache holds (on a database that answers out of
    // order, an older read may arrive after a newer one).
    if (generation !== null && generation === this.#generation) {
      if (this.#sessions.size >= this.capacity) this.#sessions.delete(this.#sessions.keys().next().value!)
      this.#sessions.set(hash, session)
    }
    return session
  }
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
  /** Notes a use of `session` if its last use is old enough, and records the new one on it. */
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
      // A cached session (SessionCache) is noted once per precision step, not on every request.
      session.lastUsedAt = now.getTime()
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
