import { and, lt, sql, type SQL } from 'drizzle-orm'
import type { RateLimitRule, RateLimits } from './config.js'
import { writeTransaction, type Db } from './db/client.js'
import { rateLimits } from './db/schema.js'

export type RateLimitClass = keyof RateLimits

export interface RateLimitVerdict {
  allowed: boolean
  /** Seconds until the window resets (for `Retry-After` and the `RateLimit` header's `t`). */
  retryAfter: number
  /** Units left in the window after this request (what a refused one could not spend is still there). */
  remaining: number
}

/** How often a process deletes the rows of windows that have ended. */
const SWEEP_INTERVAL_MS = 60_000

/**
 * Fixed-window counters per key, kept in the `rate_limits` table so that every process on the
 * data directory shares them and they survive a restart. Each counted request is one atomic
 * upsert, so concurrent hits (in this process or another) never lose a count. A request counts
 * `cost` units (1 but in the `heavy` class, docs/social.md#rate-limits); a refused one counts none,
 * so a client that asked too much in one request can still spend what it has left on a smaller one.
 */
export class RateLimiter {
  #lastSweep: number | null = null

  /**
   * `grouped`: the database is a local file, whose client commits the write transactions of a turn
   * of the event loop together (group commit, local-client.ts), so each count runs as a write
   * transaction and joins them instead of taking the write lock alone. On a libsql server a
   * transaction is several round trips and the server orders the writes itself: there a count is
   * the one statement.
   */
  constructor(
    private readonly db: Db,
    private readonly limits: RateLimits,
    private readonly now: () => number,
    private readonly grouped = false,
  ) {}

  /** The rows a write statement returns (`all`: drizzle's `get` fails on a statement that returns none). */
  #write<T>(statement: SQL): Promise<T[]> {
    return this.grouped ? writeTransaction(this.db, (tx) => tx.all<T>(statement)) : this.db.all<T>(statement)
  }

  /**
   * Counts a request of `cost` units against `key` in class `kind` if the window has room for
   * them; not allowed (and not counted) otherwise. A cost over the class's maximum is taken as the
   * maximum, so that any one request can pass in a fresh window.
   */
  async hit(kind: RateLimitClass, key: string, cost = 1): Promise<RateLimitVerdict> {
    const rule = this.limits[kind]
    const units = Math.max(1, Math.min(Math.ceil(cost), rule.max))
    const now = this.now()
    await this.#sweep(now)
    const fresh = sql`excluded.window_start - window_start >= ${rule.windowMs}`
    // SET and WHERE read the stored row. When the WHERE is false nothing is written and nothing
    // returned: the request is refused. A first request of a key is only refused if the class allows none.
    const [row] = await this.#write<{ count: number; window_start: number }>(sql`
      INSERT INTO rate_limits (key, window_start, count) VALUES (${`${kind}:${key}`}, ${now}, ${units})
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN ${fresh} THEN ${units} ELSE count + ${units} END,
        window_start = CASE WHEN ${fresh} THEN excluded.window_start ELSE window_start END
      WHERE ${fresh} OR count + ${units} <= ${rule.max}
      RETURNING count, window_start`)
    if (row && row.count <= rule.max) return this.#verdict(rule, row.count, row.window_start, now)
    const stored = await this.#read(kind, key)
    return { ...this.#verdict(rule, stored?.count ?? units, stored?.window_start ?? now, now), allowed: false }
  }

  /** Whether one more request against `key` would still be allowed, without counting one. */
  async peek(kind: RateLimitClass, key: string): Promise<RateLimitVerdict> {
    const rule = this.limits[kind]
    const now = this.now()
    const row = await this.#read(kind, key)
    if (!row || now - row.window_start >= rule.windowMs) return { allowed: rule.max >= 1, retryAfter: Math.ceil(rule.windowMs / 1000), remaining: rule.max }
    const verdict = this.#verdict(rule, row.count, row.window_start, now)
    return { ...verdict, allowed: verdict.remaining >= 1 }
  }

  async #read(kind: RateLimitClass, key: string): Promise<{ count: number; window_start: number } | undefined> {
    const [row] = await this.db.all<{ count: number; window_start: number }>(
      sql`SELECT count, window_start FROM rate_limits WHERE key = ${`${kind}:${key}`}`,
    )
    return row
  }

  /** Where a window with `count` units spent stands at `now`. */
  #verdict(rule: RateLimitRule, count: number, windowStart: number, now: number): RateLimitVerdict {
    // Clamped so that a clock stepped backwards never asks a client to wait longer than a window.
    const left = Math.min(rule.windowMs, windowStart + rule.windowMs - now)
    return { allowed: count <= rule.max, retryAfter: Math.max(1, Math.ceil(left / 1000)), remaining: Math.max(0, rule.max - count) }
  }

  async #sweep(now: number) {
    if (this.#lastSweep !== null && now - this.#lastSweep < SWEEP_INTERVAL_MS) return
    this.#lastSweep = now
    // Each class's rows once its own window has ended (a minute for most, an hour for reports): the
    // shortest window bounds the range of rate_limits_window_idx, the key's class prefix picks the rest.
    const rules = Object.entries(this.limits)
    const shortest = Math.min(...rules.map(([, rule]) => rule.windowMs))
    const longest = Math.max(...rules.map(([, rule]) => rule.windowMs))
    const windowOfKey = sql.join(
      rules.map(([kind, rule]) => sql`WHEN ${kind} THEN ${rule.windowMs}`),
      sql` `,
    )
    await this.db
      .delete(rateLimits)
      .where(
        and(
          lt(rateLimits.windowStart, now - shortest),
          sql`${rateLimits.windowStart} < ${now} - CASE substr(${rateLimits.key}, 1, instr(${rateLimits.key}, ':') - 1) ${windowOfKey} ELSE ${longest} END`,
        ),
      )
  }
}
