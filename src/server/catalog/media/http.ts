/**
 * `GET /api/media?url=&fetch=` (docs/media.md): what a media URL is, as `{message, provider, type,
 * title, author, thumbnail, media, embed_html, ...}`. The page is fetched through the fetch guard
 * within `PLAZA_MEDIA_TIMEOUT`; nothing is stored.
 */
import { mediaInput } from '../../../shared/schemas/media.js'
import { sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import { describeMedia } from './describe.js'

export async function handleMedia({ res, ctx, query }: Exchange): Promise<void> {
  const input = mediaInput.parse(query)
  const { config } = ctx.services
  const answer = await describeMedia(input.url, {
    fetch: input.fetch,
    allowPrivate: config.fetchAllowPrivate,
    timeoutMs: config.mediaTimeoutMs,
    // Twitch players play only inside the host that embeds them: the client of this server, most likely.
    embedParent: hostOf(ctx.origin),
  })
  sendJson(res, 200, answer)
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).hostname || 'localhost'
  } catch {
    return 'localhost'
  }
}
