/**
 * A sliding one-minute count in one-second buckets (requests, or tokens, of one key in this
 * process): bounded memory whatever the traffic, exact to the second.
 */
const SECONDS = 60

export class MinuteWindow {
  readonly #counts = new Float64Array(SECONDS)
  /** Which second each bucket holds; -1 for none yet. */
  readonly #seconds = new Float64Array(SECONDS).fill(-1)

  add(nowMs: number, amount: number): void {
    const second = Math.floor(nowMs / 1000)
    const slot = second % SECONDS
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second
      this.#counts[slot] = 0
    }
    this.#counts[slot] += amount
  }

  /** What was added in the last 60 seconds. */
  total(nowMs: number): number {
    const second = Math.floor(nowMs / 1000)
    let sum = 0
    for (let slot = 0; slot < SECONDS; slot++) if (second - this.#seconds[slot] < SECONDS && this.#seconds[slot] <= second) sum += this.#counts[slot]
    return sum
  }

  /** Whole seconds until the total drops below `limit` (at least 1), as buckets leave the window. */
  secondsUntilBelow(nowMs: number, limit: number): number {
    const second = Math.floor(nowMs / 1000)
    const live: Array<[number, number]> = []
    for (let slot = 0; slot < SECONDS; slot++) {
      if (second - this.#seconds[slot] < SECONDS && this.#seconds[slot] <= second) live.push([this.#seconds[slot], this.#counts[slot]])
    }
    live.sort((a, b) => a[0] - b[0])
    let remaining = live.reduce((sum, [, count]) => sum + count, 0)
    for (const [at, count] of live) {
      remaining -= count
      if (remaining < limit) return Math.max(1, at + SECONDS - second)
    }
    return 1
  }
}
