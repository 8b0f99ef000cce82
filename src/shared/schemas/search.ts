import { z } from 'zod'

/** Search (decisions §3): q at least 2 characters; limit default 10, clamped to 50. */
export const SEARCH_LIMIT_DEFAULT = 10
export const SEARCH_LIMIT_MAX = 50

const limit = z.coerce
  .number({ error: 'limit must be a number' })
  .int('limit must be a whole number')
  .positive('limit must be at least 1')
  .default(SEARCH_LIMIT_DEFAULT)
  .transform((n) => Math.min(n, SEARCH_LIMIT_MAX))

export const searchInput = z.object({
  q: z.string({ error: 'q is required' }).trim().min(2, 'q must be at least 2 characters').max(100, 'q must be at most 100 characters'),
  limit,
})
export type SearchInput = z.input<typeof searchInput>

/** Trending hashtags: limit as for search. */
export const trendingInput = z.object({ limit }).default({ limit: SEARCH_LIMIT_DEFAULT })
export type TrendingInput = z.input<typeof trendingInput>
