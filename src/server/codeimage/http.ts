/**
 * `POST /api/codeimage` (utility-api.md, decisions §5): image bytes by default, or with
 * `Accept: application/json` the stored image as `{message, url, path, width, height}` at the top
 * level (the utility API's shown answer form, no envelope). Errors go through the adapter's
 * error path: the envelope `{status: "error", message, data: null, timestamp}` with 400, 413,
 * 429 or 503.
 */
import { TRPCError } from '@trpc/server'
import type { ErrorCases } from '../errors.js'
import { readJson, sendJson } from '../http.js'
import type { Exchange } from '../rest/adapter.js'
import { serverTiming } from '../workers/pool.js'
import type { CodeImageInput } from '../../shared/schemas/codeimage.js'
import { attachBackgroundImage } from './background.js'
import { MIME } from './service.js'
import { storeCodeImage } from './store.js'

/** Room for the largest snippet even when JSON escaping multiplies it, plus the other fields. */
const BODY_LIMIT = 512 * 1024

/** True when the client asked for JSON rather than the image (an explicit `application/json` in Accept). */
/** What rendering a code image refuses (RenderRefusal in renderer.ts, ErrorCases in errors.ts). */
export const CODE_IMAGE_ERRORS: ErrorCases = {
  400: 'backgroundImage could not be decoded as an image',
  413: 'The snippet is longer than the limits (100 KiB, 2000 lines), or the image would be larger than the pixel budget',
}

export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean)
    return type.trim() === 'application/json' && (q === undefined || Number(q) > 0)
  })
}

export async function handleCodeImage({ req, res, ctx }: Exchange): Promise<void> {
  const body = await readJson(req, BODY_LIMIT)
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'Request body must be a JSON object' })
  }
  const codeimage = ctx.services.codeimage
  if (wantsJson(req.headers.accept)) {
    sendJson(res, 200, await storeCodeImage(ctx.services, body as CodeImageInput, ctx.origin))
    return
  }
  const image = await codeimage.render(body as CodeImageInput, (job) => attachBackgroundImage(ctx.services, job, ctx.origin))
  res.writeHead(200, {
    'content-type': MIME[image.format],
    'content-length': image.data.byteLength,
    'x-image-width': String(image.width),
    'x-image-height': String(image.height),
    'x-code-language': image.language,
    'server-timing': serverTiming(image.timing),
    'cache-control': 'no-store',
  })
  res.end(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength))
}
