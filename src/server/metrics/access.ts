/** Who may read the metrics and call statistics: anyone, or with `PLAZA_METRICS_TOKEN` only its bearer. */
import { createHash, timingSafeEqual } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import type { ErrorCases } from '../errors.js'
import type { Exchange } from '../rest/adapter.js'
import type { Metrics } from './recorder.js'

/** What reading the metrics can answer beyond a missing token (ErrorCases in errors.ts). */
export const METRICS_ERRORS: ErrorCases = { 503: 'Metrics are switched off on this server (PLAZA_METRICS=off), or could not be gathered from every worker' }

const digest = (text: string) => createHash('sha256').update(text).digest()

/** Compares digests, not the strings: equal lengths for timingSafeEqual, and no early exit that would time the token out. */
function tokenMatches(given: string | null, expected: string): boolean {
  return given !== null && timingSafeEqual(digest(given), digest(expected))
}

/**
 * The process's metrics, once the caller has shown the token (401 otherwise, before anything else
 * is said); 503 when metrics are switched off. Not rate-limited, as the whole system group is not
 * (the OpenAPI document says so): a scraper polls, and the token is what guards the figures.
 */
export function admitMetricsReader({ res, ctx }: Pick<Exchange, 'res' | 'ctx'>): Metrics {
  const expected = ctx.services.config.metrics.token
  if (expected !== null && !tokenMatches(ctx.token, expected)) {
    res.setHeader('www-authenticate', 'Bearer realm="metrics"')
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'The metrics need the token the server was given in PLAZA_METRICS_TOKEN: send Authorization: Bearer <token>' })
  }
  const metrics = ctx.services.metrics
  if (!metrics) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Metrics are switched off on this server (PLAZA_METRICS=off)' })
  return metrics
}

/** A failure to gather every worker's figures is the server's state, not a bug: 503 with what happened. */
export async function collectOr503(metrics: Metrics, options?: { flush?: boolean }) {
  try {
    return await metrics.collect(options)
  } catch (error) {
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `The metrics could not be gathered: ${(error as Error).message}` })
  }
}
