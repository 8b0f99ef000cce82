import { z } from 'zod'

/** One operation's figures over a span (GET /api/stats, docs/metrics.md). */
export const operationFigures = z.object({
  calls: z.number(),
  /** Answers with status 500 or more. */
  errors: z.number(),
  /** Answers with status 400 to 499 (499: the client went away). */
  client_errors: z.number(),
  /** Null before the first call. */
  mean_ms: z.number().nullable(),
  p95_ms: z.number().nullable(),
})

/** `GET /api/stats`: every offered catalog operation, since the server started and all-time. */
export const operationStatsAnswer = z.object({
  message: z.string(),
  operations: z.array(
    z.object({
      method: z.string(),
      path: z.string(),
      since_start: operationFigures,
      all_time: operationFigures,
    }),
  ),
})

export type OperationStatsAnswer = z.infer<typeof operationStatsAnswer>
