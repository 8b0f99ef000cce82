import { and, lt, sql, type SQL } from 'drizzle-orm'
import type { RateLimits } from './config.js'
import { writeTransaction, type Db } from './db/client.js'
import { rateLimits } from './db/schema.js'

export type RateLimitClass = keyof RateLimits

export interface RateLimitVerdict {
  allowed: boolean
  /** Seconds until the window resets (for `Retry-After`). */
  retryAfter: number
}

/** How often a process deletes the rows of windows that have ended. */
const SWEEP_INTERVAL_MS = 60_000

/**
 * Fixed-window counters per key, kept in the `rate_limits` table so that every process on the
 * data directory shares them and they survive a restart. Each counted request is one atomic
 * upsert, so concurrent hits (in this process or another) never lose a count.
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

  #write<T>(statement: SQL): Promise<T> {
    return this.grouped ? writeTransaction(this.db, (tx) => tx.get<T>(statement)) : this.db.get<T>(statement)
  }

  /** Counts one request against `key` in class `kind`; not allowed once the window's count passes the class's maximum. */
  async hit(kind: RateLimitClass, key: string): Promise<RateLimitVerdict> {
    const rule = this.limits[kind]
    const now = this.now()
    await this.#sweep(now)
    // SET expressions read the old row, so `count` and `window_start` below are the stored values.
    const row = await this.#write<{ count: number; window_start: number }>(sql`
      INSERT INTO rate_limits (key, window_start, count) VALUES (${`${kind}:${key}`}, ${now}, 1)
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN excluded.window_start - window_start >= ${rule.windowMs} THEN 1 ELSE count + 1 END,
        window_start = CASE WHEN excluded.window_start - window_start >= ${rule.windowMs} THEN excluded.window_start ELSE window_start END
      RETURNING count, window_start`)
    return this.#verdict(rule.max, rule.windowMs, row.count, row.window_start, now)
  }

  /** Whether one more request against `key` would still be allowed, without counting one. */
  async peek(kind: RateLimitClass, key: string): Promise<RateLimitVerdict> {
    const rule = this.limits[kind]
    const now = this.now()
    const [row] = await this.db.all<{ count: number; window_start: number }>(
      sql`SELECT count, window_start FROM rate_limits WHERE key = ${`${kind}:${key}`}`,
    )
    if (!row || now - row.window_start >= rule.windowMs) return { allowed: true, retryAfter: 0 }
    return this.#verdict(rule.max, rule.windowMs, row.count + 1, row.window_start, now)
  }

  #verdict(max: number, windowMs: number, count: number, windowStart: number, now: number): RateLimitVerdict {
    // Clamped so that a clock stepped backwards never asks a client to wait longer than a window.
    const remaining = Math.min(windowMs, windowStart + windowMs - now)
    return { allowed: count <= max, retryAfter: Math.max(1, Math.ceil(remaining / 1000)) }
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
