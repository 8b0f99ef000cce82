/**
 * oEmbed (https://oembed.com): the JSON a provider answers about one of its URLs, found through the
 * page's discovery link and fetched through the fetch guard like the page itself, bounded in size.
 */
import { TRPCError } from '@trpc/server'
import { guardedRead } from '../../fetch-guard.js'

/** The most of an oEmbed answer read: real ones are a few KiB (their `html` is one element). */
export const OEMBED_MAX_BYTES = 64 * 1024

export interface OEmbed {
  type: string | null
  title: string | null
  authorName: string | null
  authorUrl: string | null
  providerName: string | null
  providerUrl: string | null
  thumbnailUrl: string | null
  html: string | null
  /** A photo's own URL (`type: photo`). */
  url: string | null
  width: number | null
  height: number | null
}

const str = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null)
/** Providers send sizes as numbers or as strings of digits; anything else (`"100%"`) is no size. */
const size = (value: unknown) => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : NaN
  return Number.isInteger(n) && n > 0 && n < 100_000 ? n : null
}

/** The fields of an oEmbed JSON document, or null when `text` is not one (not JSON, not an object). */
export function parseOEmbed(text: string): OEmbed | null {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return null
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null
  const o = body as Record<string, unknown>
  return {
    type: str(o.type)?.toLowerCase() ?? null,
    title: str(o.title),
    authorName: str(o.author_name),
    authorUrl: str(o.author_url),
    providerName: str(o.provider_name),
    providerUrl: str(o.provider_url),
    thumbnailUrl: str(o.thumbnail_url),
    html: str(o.html),
    url: str(o.url),
    width: size(o.width),
    height: size(o.height),
  }
}

/** Fetches and reads the oEmbed answer at `href`: 422 when it is too large or not oEmbed JSON, the guard's refusals otherwise. */
export async function fetchOEmbed(href: string, options: { allowPrivate: boolean; timeoutMs: number; resolve?: (host: string) => Promise<string[]> }): Promise<OEmbed> {
  const field = 'oembed'
  return guardedRead(href, { field, allowPrivate: options.allowPrivate, timeoutMs: options.timeoutMs, maxBytes: OEMBED_MAX_BYTES, accept: 'application/json', resolve: options.resolve }, async (response) => {
    const chunks: Buffer[] = []
    for await (const chunk of response.body) chunks.push(chunk)
    if (response.truncated()) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the answer is larger than ${OEMBED_MAX_BYTES / 1024} KiB` })
    const parsed = parseOEmbed(Buffer.concat(chunks).toString('utf8'))
    if (!parsed) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the answer is not oEmbed JSON` })
    return parsed
  })
}
