/** The benchmarks' one way of timing a piece of work: warm-up runs, then the median of `runs` timed ones. */

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Median milliseconds of `work` over `runs` runs, after `warmup` untimed ones. */
export async function medianMs(work: () => unknown, runs: number, warmup = 1): Promise<number> {
  for (let i = 0; i < warmup; i++) await work()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await work()
    times.push(performance.now() - start)
  }
  return median(times)
}

/** The q-quantile (0-1) of `values`, by linear interpolation between the closest ranks. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low)
}
