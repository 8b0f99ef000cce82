/**
 * A gateway key's requests and tokens over the last minute, kept in the database one row per key
 * and second (`gateway_key_minutes`), so that rpm and tpm hold across every worker and host sharing
 * it (docs/deploy.md). Only keys with a limit are counted. Calls that start at the same instant on
 * two hosts may both pass the last free place: the limit is exact to within those.
 */
import { sql } from 'drizzle-orm'
import type { Db } from '../../db/client.js'

const WINDOW_SECONDS = 60
/** Rows older than this are deleted, at most once per SWEEP_MS per process. */
const KEEP_SECONDS = 120
const SWEEP_MS = 60_000

export interface KeyLimits {
  rpm: number | null
  tpm: number | null
}

/** Why a call is refused, and the whole seconds until it would pass (at least 1). */
export interface Refusal {
  limit: 'rpm' | 'tpm'
  wait: number
}

/** The key's last minute once a call is admitted (this call counted), for OpenAI's x-ratelimit-* headers. */
export interface MinuteWindow {
  requests: number
  tokens: number
  /** Whole seconds until the oldest counted request, or token, leaves the window (0 when none is counted). */
  requestsReset: number
  tokensReset: number
}

export interface KeyMinutes {
  /**
   * Counts one request of the key unless the last minute already holds `rpm` requests or `tpm`
   * tokens; then says which and how long to wait. Null for a key without either limit (nothing is counted).
   */
  admit(keyId: number, nowMs: number, limits: KeyLimits): Promise<{ refused: Refusal | null; window: MinuteWindow } | null>
  /** Adds a finished call's tokens to its second (written in the background, in order; the next `admit` of this process waits for it). */
  addTokens(keyId: number, nowMs: number, tokens: number): void
}

interface Second {
  second: number
  requests: number
  tokens: number
}

/** Whole seconds until what `amount` counts over `rows` drops below `limit`, as seconds leave the window. */
function secondsUntilBelow(rows: Second[], amount: (row: Second) => number, now: number, limit: number): number {
  let remaining = rows.reduce((sum, row) => sum + amount(row), 0)
  for (const row of rows) {
    remaining -= amount(row)
    if (remaining < limit) return Math.max(1, row.second + WINDOW_SECONDS - now)
  }
  return 1
}

export function createKeyMinutes(db: Db, onError: (error: unknown) => void): KeyMinutes {
  let writes: Promise<void> = Promise.resolve()
  let sweptAt = -Infinity
  const queue = (write: () => Promise<unknown>) => {
    writes = writes.then(write).then(
      () => {},
      (error) => onError(error),
    )
  }

  return {
    async admit(keyId, nowMs, limits) {
      if (limits.rpm === null && limits.tpm === null) return null
      await writes
      const now = Math.floor(nowMs / 1000)
      if (nowMs - sweptAt >= SWEEP_MS) {
        sweptAt = nowMs
        queue(() => db.run(sql`DELETE FROM gateway_key_minutes WHERE second < ${now - KEEP_SECONDS}`))
      }
      const rows = await db.all<Second>(sql`
        SELECT second, requests, tokens FROM gateway_key_minutes
        WHERE key_id = ${keyId} AND second > ${now - WINDOW_SECONDS} AND second <= ${now}
        ORDER BY second`)
      const requests = rows.reduce((sum, row) => sum + row.requests, 0)
      const tokens = rows.reduce((sum, row) => sum + row.tokens, 0)
      const resetOf = (counts: (row: Second) => number, fallback: number) => {
        const oldest = rows.find((row) => counts(row) > 0)
        return oldest ? Math.max(1, oldest.second + WINDOW_SECONDS - now) : fallback
      }
      const window = (added: number): MinuteWindow => ({ requests: requests + added, tokens, requestsReset: resetOf((row) => row.requests, added ? WINDOW_SECONDS : 0), tokensReset: resetOf((row) => row.tokens, 0) })
      if (limits.rpm !== null && requests >= limits.rpm) return { refused: { limit: 'rpm', wait: secondsUntilBelow(rows, (row) => row.requests, now, limits.rpm) }, window: window(0) }
      if (limits.tpm !== null && tokens >= limits.tpm) return { refused: { limit: 'tpm', wait: secondsUntilBelow(rows, (row) => row.tokens, now, limits.tpm) }, window: window(0) }
      await db.run(sql`
        INSERT INTO gateway_key_minutes (key_id, second, requests) VALUES (${keyId}, ${now}, 1)
        ON CONFLICT (key_id, second) DO UPDATE SET requests = requests + 1`)
      return { refused: null, window: window(1) }
    },

    addTokens(keyId, nowMs, tokens) {
      const second = Math.floor(nowMs / 1000)
      queue(() =>
        db.run(sql`
          INSERT INTO gateway_key_minutes (key_id, second, tokens) VALUES (${keyId}, ${second}, ${tokens})
          ON CONFLICT (key_id, second) DO UPDATE SET tokens = tokens + excluded.tokens`),
      )
    },
  }
}
