/**
 * At most `limit` programs run at once, across languages; a few more may wait briefly for a turn,
 * and the rest are refused at once with 503 and Retry-After rather than piling up.
 */
export class BusyError extends Error {
  constructor(readonly retryAfter: number) {
    super(`Too many programs are running; try again in ${retryAfter} s`)
  }
}

export class Gate {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly options: { limit: number; queue: number; waitMs: number }) {}

  /** Runs `task` when a place is free; BusyError when the queue is full or the wait runs out. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.options.limit) await this.wait()
    else this.active++
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.active--
    }
  }

  private wait(): Promise<void> {
    const retryAfter = Math.max(1, Math.ceil(this.options.waitMs / 1000))
    if (this.waiting.length >= this.options.queue) return Promise.reject(new BusyError(retryAfter))
    return new Promise((resolve, reject) => {
      // The place is handed over directly (active stays the same), so no newcomer can slip in between.
      const turn = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(turn), 1)
        reject(new BusyError(retryAfter))
      }, this.options.waitMs)
      this.waiting.push(turn)
    })
  }
}
