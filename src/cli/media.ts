/**
 * What `plaza util media` does: describe a media URL embedded (this process fetches the page,
 * through the same fetch guard and within the same `PLAZA_MEDIA_TIMEOUT` as a server) or ask a
 * server's `GET /api/media`, and show the answer.
 */
import type { MediaAnswer } from '../shared/schemas/media.js'
import { reach, UsageError, type Target } from './client.js'

export async function describeMediaUrl(target: Target, url: string, fetch: boolean): Promise<MediaAnswer> {
  // A URL no fetch could take (not a URL, another scheme, credentials) is a usage error (exit 2) in both modes, checked here.
  const { parseUrl } = await import('../server/fetch-guard.js')
  try {
    parseUrl(url.trim(), 'url')
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  return target.kind === 'remote' ? askServer(target.url, url, fetch) : describeHere(url, fetch)
}

async function askServer(server: string, url: string, fetch: boolean): Promise<MediaAnswer> {
  const query = new URLSearchParams({ url })
  if (!fetch) query.set('fetch', 'false')
  const response = await reach(server, `${server}/api/media?${query}`, { headers: { accept: 'application/json' } })
  const body = (response.headers.get('content-type') ?? '').includes('json') ? ((await response.json().catch(() => null)) as Partial<MediaAnswer> | null) : null
  if (!response.ok) {
    throw new Error(body?.message ?? `unexpected answer from ${server} (HTTP ${response.status}): is it a Plaza server?`)
  }
  if (typeof body?.type !== 'string' || typeof body.source !== 'object') throw new Error(`unexpected answer from ${server}: is it a Plaza server with GET /api/media?`)
  return body as MediaAnswer
}

async function describeHere(url: string, fetch: boolean): Promise<MediaAnswer> {
  const [{ mediaInput }, { describeZodError }, { ZodError }, { describeMedia }, config] = await Promise.all([
    import('../shared/schemas/media.js'),
    import('../server/errors.js'),
    import('zod'),
    import('../server/catalog/media/describe.js'),
    import('../server/config.js'),
  ])
  let input
  try {
    input = mediaInput.parse({ url, fetch: String(fetch) })
  } catch (error) {
    throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
  }
  return describeMedia(input.url, {
    fetch: input.fetch,
    allowPrivate: config.parseFetchAllowPrivate(process.env.PLAZA_FETCH_ALLOW_PRIVATE),
    timeoutMs: config.parseMediaTimeout(process.env.PLAZA_MEDIA_TIMEOUT),
  })
}

/** The answer as a few aligned lines: what it is, then each field that has a value. */
export function formatMedia(answer: MediaAnswer): string {
  const rows: Array<[string, string | number | null]> = [
    ['provider', answer.provider],
    ['type', answer.type],
    ['id', answer.id],
    ['title', answer.title],
    ['author', answer.author],
    ['thumbnail', answer.thumbnail],
    ['media', answer.media],
    ['embed', answer.embed_url],
    ['size', answer.width && answer.height ? `${answer.width}×${answer.height}` : null],
    ['canonical', answer.canonical_url],
  ]
  const shown = rows.filter(([, value]) => value !== null && value !== '')
  const width = Math.max(...shown.map(([name]) => name.length))
  const lines = [answer.message, ...shown.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`)]
  for (const warning of answer.warnings) lines.push(`  warning: ${warning}`)
  return lines.join('\n')
}
