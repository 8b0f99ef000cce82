/**
 * SerpApi's Google Lens engine (`GET /search.json?engine=google_lens&url=&api_key=`): the provider
 * fetches the image itself and answers what Google Lens found, `visual_matches` first. SerpApi
 * reports "no results" as a 200 with an `error` text, which is an empty answer here, not a failure.
 */
import type { LensMatch } from '../../shared/schemas/searchops.js'
import { UpstreamError } from './errors.js'
import type { Attempt } from './layer.js'
import { tidy } from './searxng.js'

const ANSWER_LIMIT = 8 * 1024 * 1024
const NO_RESULTS = /hasn'?t returned any results|no results/i

const httpUrl = (value: unknown): string | null => (typeof value === 'string' && /^https?:\/\//i.test(value) ? value.slice(0, 2048) : null)

export async function serpapiLens(call: Attempt, imageUrl: string, limit: number): Promise<LensMatch[]> {
  const search = new URLSearchParams({ engine: 'google_lens', url: imageUrl, hl: 'en', ...(call.target.apiKey ? { api_key: call.target.apiKey } : {}) })
  const body = await (await call.request({ method: 'GET', url: `${call.target.baseUrl}/search.json?${search}`, headers: { accept: 'application/json', ...call.target.headers } })).json(ANSWER_LIMIT)
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new UpstreamError('protocol', `${call.label} answered a malformed Lens answer`)
  if (typeof body.error === 'string') {
    if (NO_RESULTS.test(body.error)) return []
    throw new UpstreamError('protocol', `${call.label} answered an error: ${tidy(body.error, 300)}`)
  }
  if (body.visual_matches !== undefined && !Array.isArray(body.visual_matches)) throw new UpstreamError('protocol', `${call.label} answered a malformed Lens answer (visual_matches is not a list)`)
  const matches: LensMatch[] = []
  for (const item of (body.visual_matches ?? []) as unknown[]) {
    if (matches.length >= limit) break
    if (!item || typeof item !== 'object') continue
    const match = item as Record<string, unknown>
    const url = httpUrl(match.link)
    if (!url || typeof match.title !== 'string') continue
    matches.push({ title: tidy(match.title, 300), url, source: typeof match.source === 'string' && match.source.trim() ? tidy(match.source, 200) : null, thumbnail: httpUrl(match.thumbnail) })
  }
  return matches
}
