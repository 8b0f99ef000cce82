/**
 * The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers-11, structured-field Lists) on
 * every answer counted against a rate limit, so that a client can pace itself:
 *
 *   RateLimit-Policy: "default";q=100;w=60
 *   RateLimit: "default";r=97;t=42
 *
 * One item per class the request was counted in: the quota `q` per window of `w` seconds, then
 * the `r` units left and the `t` seconds until the window ends. A 429 carries `r=0` and
 * `Retry-After` with the same seconds as `t`. No partition key is sent: it would name the address
 * or account counted (docs/social.md#rate-limits).
 */
import type { ServerResponse } from 'node:http'
import type { RateLimits } from './config.js'
import type { RateLimitClass, RateLimitVerdict } from './rate-limit.js'

/** Told of each count or refusal a request meets, in the order met. */
export type RateLimitListener = (kind: RateLimitClass, verdict: RateLimitVerdict) => void

/** Writes the fields on `res` as counts arrive (the latest per class), as long as its head is not sent. */
export function rateLimitHeaders(res: ServerResponse, limits: RateLimits): RateLimitListener {
  const latest = new Map<RateLimitClass, RateLimitVerdict>()
  return (kind, verdict) => {
    latest.set(kind, verdict)
    if (res.headersSent) return
    const policies: string[] = []
    const states: string[] = []
    for (const [name, { remaining, retryAfter }] of latest) {
      const rule = limits[name]
      policies.push(`"${name}";q=${rule.max};w=${Math.ceil(rule.windowMs / 1000)}`)
      states.push(`"${name}";r=${remaining};t=${retryAfter}`)
    }
    res.setHeader('ratelimit-policy', policies.join(', '))
    res.setHeader('ratelimit', states.join(', '))
  }
}
