import type { RateLimits } from './config.js'

export type RateLimitClass = keyof RateLimits

export interface RateLimitVerdict {
  allowed: boolean
  /** Seconds until the window resets (for `Retry-After`). */
  retryAfter: number
}

/** Fixed-window counters per key, kept in memory; stale windows are dropped as they are passed. */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>()
  #lastSweep = 0

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number,
  ) {}

  hit(kind: RateLimitClass, key: string): RateLimitVerdict {
    const rule = this.limits[kind]
    const now = this.now()
    this.#sweep(now)
    const id = `${kind}:${key}`
    let window = this.#windows.get(id)
    if (!window || now - window.start >= rule.windowMs) {
      window = { start: now, count: 0 }
      this.#windows.set(id, window)
    }
    window.count++
    const retryAfter = Math.max(1, Math.ceil((window.start + rule.windowMs - now) / 1000))
    return { allowed: window.count <= rule.max, retryAfter }
  }

  #sweep(now: number) {
    const longest = Math.max(this.limits.auth.windowMs, this.limits.upload.windowMs, this.limits.default.windowMs)
    if (now - this.#lastSweep < longest) return
    this.#lastSweep = now
    for (const [id, window] of this.#windows) if (now - window.start >= longest) this.#windows.delete(id)
  }
}
