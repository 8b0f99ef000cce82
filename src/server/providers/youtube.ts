/**
 * YouTube Data API v3: `search.list` (`GET /search?part=snippet&type=video&q=&maxResults=&key=`)
 * finds the videos, then one `videos.list` (`GET /videos?part=contentDetails&id=...`) gives their
 * durations, which a search does not carry. Titles arrive HTML-escaped and are decoded here.
 */
import { decodeHTML } from 'entities'
import type { Clip } from '../../shared/schemas/searchops.js'
import { UpstreamError } from './errors.js'
import type { Attempt } from './layer.js'
import { tidy } from './searxng.js'

const ANSWER_LIMIT = 4 * 1024 * 1024

/** ISO 8601 durations as YouTube writes them (`PT1H2M3S`, `P1DT2H`), in seconds; null for `P0D` (live) or anything else. */
export function isoDurationSeconds(text: unknown): number | null {
  if (typeof text !== 'string') return null
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text)
  if (!match) return null
  const [days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0))
  const total = Math.round(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
  return total > 0 ? total : null
}

const keyOf = (call: Attempt): Record<string, string> => (call.target.apiKey ? { key: call.target.apiKey } : {})

async function getJson(call: Attempt, path: string, query: Record<string, string>) {
  const search = new URLSearchParams({ ...query, ...keyOf(call) })
  return (await call.request({ method: 'GET', url: `${call.target.baseUrl}${path}?${search}`, headers: { accept: 'application/json', ...call.target.headers } })).json(ANSWER_LIMIT)
}

const malformed = (call: Attempt, what: string) => new UpstreamError('protocol', `${call.label} answered a malformed ${what}`)

export async function youtubeClips(call: Attempt, query: string, limit: number): Promise<Clip[]> {
  const found = await getJson(call, '/search', { part: 'snippet', type: 'video', q: query, maxResults: String(limit) })
  if (!found || !Array.isArray(found.items)) throw malformed(call, 'search.list answer (no items)')
  const videos = (found.items as Array<Record<string, any>>).filter((item) => typeof item?.id?.videoId === 'string' && typeof item?.snippet?.title === 'string').slice(0, limit)
  if (videos.length === 0) return []
  const details = await getJson(call, '/videos', { part: 'contentDetails', id: videos.map((video) => video.id.videoId).join(','), maxResults: String(videos.length) })
  if (!details || !Array.isArray(details.items)) throw malformed(call, 'videos.list answer (no items)')
  const durations = new Map<string, number | null>((details.items as Array<Record<string, any>>).map((item) => [String(item?.id), isoDurationSeconds(item?.contentDetails?.duration)]))
  return videos.map((video) => {
    const snippet = video.snippet
    const thumbnails = snippet.thumbnails ?? {}
    const thumbnail = [thumbnails.medium, thumbnails.high, thumbnails.default].find((t) => typeof t?.url === 'string')?.url ?? null
    const channel = typeof snippet.channelTitle === 'string' && snippet.channelTitle.trim() ? tidy(decodeHTML(snippet.channelTitle), 200) : null
    return {
      title: tidy(decodeHTML(snippet.title), 300),
      url: `https://www.youtube.com/watch?v=${encodeURIComponent(video.id.videoId)}`,
      thumbnail,
      duration: snippet.liveBroadcastContent === 'live' ? null : (durations.get(video.id.videoId) ?? null),
      channel,
    }
  })
}
