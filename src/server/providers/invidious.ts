/**
 * Invidious's video search (`GET /api/v1/search?q=&type=video`), the API of a self-hostable YouTube
 * front end; public instances are listed at https://api.invidious.io. One page (about 20 videos).
 */
import type { Clip } from '../../shared/schemas/searchops.js'
import { UpstreamError } from './errors.js'
import type { Attempt } from './layer.js'
import { tidy } from './searxng.js'

const CLIPS_ANSWER_LIMIT = 4 * 1024 * 1024
const VIDEO_ID = /^[\w-]{6,20}$/

/** Thumbnail qualities, best fit for a list first (Invidious names YouTube's sizes). */
const PREFERRED = ['medium', 'high', 'sddefault', 'default', 'maxres', 'maxresdefault']

/** `base` resolves the relative thumbnail paths an instance that proxies images answers. */
function thumbnailOf(thumbnails: unknown, base: string): string | null {
  if (!Array.isArray(thumbnails)) return null
  const usable = thumbnails.filter((t): t is { quality?: unknown; url: string } => !!t && typeof t === 'object' && typeof (t as { url?: unknown }).url === 'string')
  const best = PREFERRED.map((quality) => usable.find((t) => t.quality === quality)).find(Boolean) ?? usable[0]
  if (!best) return null
  try {
    return new URL(best.url, `${base}/`).href
  } catch {
    return null
  }
}

export async function invidiousClips(call: Attempt, query: string, limit: number): Promise<Clip[]> {
  const search = new URLSearchParams({ q: query, type: 'video', page: '1', sort_by: 'relevance' })
  const headers: Record<string, string> = { accept: 'application/json', ...call.target.headers }
  if (call.target.apiKey) headers.authorization = `Bearer ${call.target.apiKey}`
  const body = await (await call.request({ method: 'GET', url: `${call.target.baseUrl}/api/v1/search?${search}`, headers })).json(CLIPS_ANSWER_LIMIT)
  if (!Array.isArray(body)) throw new UpstreamError('protocol', `${call.label} answered a malformed search answer (not a list of results)`)
  const clips: Clip[] = []
  for (const item of body as unknown[]) {
    if (clips.length >= limit) break
    if (!item || typeof item !== 'object') continue
    const video = item as Record<string, unknown>
    if (video.type !== undefined && video.type !== 'video') continue
    if (typeof video.videoId !== 'string' || !VIDEO_ID.test(video.videoId) || typeof video.title !== 'string') continue
    const live = video.liveNow === true
    const seconds = typeof video.lengthSeconds === 'number' && Number.isFinite(video.lengthSeconds) && video.lengthSeconds > 0 ? Math.round(video.lengthSeconds) : null
    clips.push({
      title: tidy(video.title, 300),
      url: `https://www.youtube.com/watch?v=${video.videoId}`,
      thumbnail: thumbnailOf(video.videoThumbnails, call.target.baseUrl),
      duration: live ? null : seconds,
      channel: typeof video.author === 'string' && video.author.trim() ? tidy(video.author, 200) : null,
    })
  }
  return clips
}
