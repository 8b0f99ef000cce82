/**
 * SearXNG's JSON search API (`GET /search?q=&format=json`; the instance must list `json` under
 * `search.formats` in its settings.yml). Any server answering the same shape serves too. A key, when
 * configured, is sent as a bearer token (for an instance behind an authenticating proxy).
 */
import { UpstreamError } from './errors.js'
import type { Attempt } from './layer.js'

export interface SearchResult {
  title: string
  url: string
  snippet: string
}

/** SearXNG answers a few hundred KiB for one page of results; more is not a search answer. */
const SEARCH_ANSWER_LIMIT = 4 * 1024 * 1024

/** Collapses white space (snippets carry newlines and runs of spaces) and cuts to `max` characters. */
export const tidy = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The first `limit` results with a title and an http(s) URL, duplicates (same URL) dropped. */
export async function searxngSearch(call: Attempt, query: string, limit: number): Promise<SearchResult[]> {
  const search = new URLSearchParams({ q: query, format: 'json', pageno: '1' })
  const headers: Record<string, string> = { accept: 'application/json', ...call.target.headers }
  if (call.target.apiKey) headers.authorization = `Bearer ${call.target.apiKey}`
  const body = await (await call.request({ method: 'GET', url: `${call.target.baseUrl}/search?${search}`, headers })).json(SEARCH_ANSWER_LIMIT)
  if (!body || typeof body !== 'object' || !Array.isArray(body.results)) throw new UpstreamError('protocol', `${call.label} answered a malformed search answer (no results list)`)
  const seen = new Set<string>()
  const results: SearchResult[] = []
  for (const item of body.results as unknown[]) {
    if (results.length >= limit) break
    if (!item || typeof item !== 'object') continue
    const { title, url, content } = item as Record<string, unknown>
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url) || seen.has(url)) continue
    seen.add(url)
    results.push({ title: tidy(typeof title === 'string' && title.trim() ? title : url, 200), url: url.slice(0, 2048), snippet: tidy(typeof content === 'string' ? content : '', 600) })
  }
  return results
}
