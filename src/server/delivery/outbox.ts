/**
 * What the outboxes share (push_deliveries, mail_outbox): one sender loop per channel per process,
 * claims, and retry timing. Rows are written by the request that causes them (a notification's
 * trigger, a password reset), never sent on the request path. Each process's loop claims due rows
 * by moving `next_attempt_at` past a lease and stamping its own `claim` token in one statement, so
 * `plaza serve --workers N`, several hosts on a libsql server and a restart never send a row
 * twice or lose one: a row a dead process claimed comes due again when its lease ends, and the
 * process that claimed it can no longer touch it (every later write checks the token).
 */
import { randomBytes } from 'node:crypto'
import type { Logger } from '../logger.js'

/** A fresh claim token: which sender holds a row. */
export function claimToken(): string {
  return randomBytes(12).toString('base64url')
}

/**
 * The wait before retry number `attempt` (1 for the first retry): `baseMs` doubling up to `capMs`,
 * plus up to a fifth more at random so that senders on several hosts spread out; never less than
 * what the other side asked for with Retry-After.
 */
export function retryDelayMs(attempt: number, options: { baseMs: number; capMs: number; retryAfterMs?: number | null; random?: () => number }): number {
  const backoff = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt - 1))
  const spread = backoff * 0.2 * (options.random ?? Math.random)()
  return Math.round(Math.max(backoff + spread, options.retryAfterMs ?? 0))
}

/** The longest Retry-After honoured: a server asking for more is retried after this (the row's own limits still apply). */
const RETRY_AFTER_MAX_MS = 24 * 3600_000

/** Reads `Retry-After` (RFC 9110 §10.2.3): seconds, or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (!text) return null
  if (/^\d+$/.test(text)) return Math.min(RETRY_AFTER_MAX_MS, Number(text) * 1000)
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(0, at - now.getTime()))
}

export interface SenderLoop {
  /** Runs batches now until none is full (for tests and for a process about to exit); resolves when done. */
  drain(): Promise<void>
  /** Stops the timer and waits for the batch in flight. */
  close(): Promise<void>
}

/**
 * Runs `runOnce` (claim and send one batch; answers how many rows it claimed) every `pollMs`, and
 * again at once while batches come back full. A failing batch is logged and retried at the next
 * poll; the loop never throws. The timer does not keep the process alive.
 */
export function startSenderLoop(options: { name: string; pollMs: number; batch: number; runOnce: () => Promise<number>; logger: Logger }): SenderLoop {
  let closed = false
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null

  const runBatches = async () => {
    while (!closed) {
      let claimed: number
      try {
        claimed = await options.runOnce()
      } catch (error) {
        options.logger.warn(`${options.name} sender: a batch failed; it is retried`, { error: String((error as Error)?.message ?? error) })
        return
      }
      if (claimed < options.batch) return
    }
  }
  const run = (): Promise<void> => {
    // One batch at a time per process: a drain during a poll waits for it, then runs its own.
    running ??= runBatches().finally(() => {
      running = null
    })
    return running
  }
  const schedule = () => {
    if (closed) return
    timer = setTimeout(() => void run().then(schedule), options.pollMs)
    timer.unref()
  }
  schedule()
  return {
    async drain() {
      await running
      await run()
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
