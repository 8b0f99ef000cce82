/**
 * `POST /api/carbon` (decisions §6, docs/carbon.md): carbon.now.sh's options, drawn by the
 * code-image renderer's worker pool. PNG bytes by default; with `Accept: application/json` the
 * image stored under `uploads/carbon/` as `{message, url, path, width, height}` (top level, no
 * envelope). Errors go through the adapter: the envelope with 400, 413, 429 or 503.
 */
import { TRPCError } from '@trpc/server'
import { carbonInput, type CarbonStored } from '../../../shared/schemas/carbon.js'
import { wantsJson } from '../../codeimage/http.js'
import { readJson, sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import { storeGenerated } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'
import { serverTiming } from '../../workers/pool.js'

/** Room for the largest snippet even when JSON escaping multiplies it, plus the other fields. */
const BODY_LIMIT = 512 * 1024

export async function handleCarbon({ req, res, ctx }: Exchange): Promise<void> {
  const body = await readJson(req, BODY_LIMIT)
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'Request body must be a JSON object' })
  }
  // The options' module needs the language tables (shiki): loaded on the first request, not at start-up.
  const { FONT_NAMES, toCarbonJob } = await import('../../codeimage/carbon/options.js')
  const job = toCarbonJob(carbonInput.parse(body))
  const { services } = ctx
  if (wantsJson(req.headers.accept)) {
    const stored = await storeGenerated(services, {
      kind: 'carbon',
      key: job,
      ext: 'png',
      mime: 'image/png',
      render: async () => {
        const image = await services.codeimage.renderJob(job)
        return { body: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), width: image.width, height: image.height }
      },
    })
    const answer: CarbonStored = { message: 'Carbon image created', url: uploadUrl(ctx.origin, stored.path), path: stored.path, width: stored.width ?? 0, height: stored.height ?? 0 }
    sendJson(res, 200, answer)
    return
  }
  const image = await services.codeimage.renderJob(job)
  res.writeHead(200, {
    'content-type': 'image/png',
    'content-length': image.data.byteLength,
    'x-image-width': String(image.width),
    'x-image-height': String(image.height),
    'x-code-language': image.language,
    'x-font-family': FONT_NAMES[job.look.font],
    'server-timing': serverTiming(image.timing),
    'cache-control': 'no-store',
  })
  res.end(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength))
}
