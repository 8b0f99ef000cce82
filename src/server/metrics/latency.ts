/**
 * Latency buckets shared by the request histogram (/metrics) and the persisted call statistics
 * (/api/stats), so that both read the same p95 from the same bounds.
 */

/** Upper bounds in milliseconds; a last, open bucket holds anything slower. */
const LATENCY_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const

/** The same bounds in seconds, for Prometheus (whose convention is seconds). */
export const LATENCY_BOUNDS_SECONDS = LATENCY_BOUNDS_MS.map((ms) => ms / 1000)

/** How many buckets there are: one per bound plus the open one. */
export const BUCKET_COUNT = LATENCY_BOUNDS_MS.length + 1

/** Where each bucket starts (its `from_ms` in the database): 0, then each bound. */
export const BUCKET_STARTS_MS: readonly number[] = [0, ...LATENCY_BOUNDS_MS]

/** The bucket of a duration: the first whose bound it does not exceed (Prometheus' `le`), else the open one. */
export function bucketOf(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]) return i
  return LATENCY_BOUNDS_MS.length
}

/**
 * The `q` quantile of per-bucket counts (not cumulative), interpolated linearly inside its bucket as
 * Prometheus' `histogram_quantile` does; in the open bucket it is that bucket's start (the largest
 * bound known). Null when there are no calls.
 */
export function quantileMs(q: number, counts: ArrayLike<number>): number | null {
  let total = 0
  for (let i = 0; i < counts.length; i++) total += counts[i]
  if (total === 0) return null
  const rank = q * total
  let below = 0
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] > 0 && below + counts[i] >= rank) {
      if (i >= LATENCY_BOUNDS_MS.length) return BUCKET_STARTS_MS[i]
      const start = BUCKET_STARTS_MS[i]
      return start + (LATENCY_BOUNDS_MS[i] - start) * ((rank - below) / counts[i])
    }
    below += counts[i]
  }
  return BUCKET_STARTS_MS[counts.length - 1]
}
