/**
 * The image operations' handlers (docs/imaging.md): validate the query, read the image (fetch
 * guard or this server's uploads for GET, the multipart `file` for the POST forms), process it in the media queue, and answer the bytes, or with
 * `Accept: application/json` the stored file as `{message, url, path, width, height}` under
 * `uploads/imagefx|expand|upscale/`.
 */
import { createHash } from 'node:crypto'
import {
  expandFormInput,
  expandInput,
  IMAGE_EFFECTS,
  imageFxFormInput,
  imageFxInput,
  upscaleFormInput,
  upscaleInput,
  type ImageEffectName,
  type StoredImageAnswer,
} from '../../../shared/schemas/imaging.js'
import { wantsJson } from '../../codeimage/http.js'
import { sendJson } from '../../http.js'
import { mediaQueue } from '../../media/queue.js'
import type { Exchange } from '../../rest/adapter.js'
import { discardBody, readFormFile } from '../../rest/uploads.js'
import { storeGenerated, type GeneratedKind } from '../../uploads/generated.js'
import { IMAGE_MAX_BYTES, uploadUrl } from '../../uploads/pipeline.js'
import { expand, upscale } from './canvas.js'
import { applyEffect } from './effects.js'
import type { Services } from '../../services.js'
import { aiUpscaler, upscaleWithProvider } from '../images/upscale.js'
import { expandWithProvider, outpainter } from '../images/expand.js'
import { decode, encode, type EncodedImage, type RawImage } from './pixels.js'
import { checkImage, readSourceImage, type SourceImage } from './source.js'

interface ImageJob {
  kind: GeneratedKind & ('imagefx' | 'expand' | 'upscale')
  /** What, besides the image's bytes, decides the result: part of the stored file's name. */
  params: Record<string, unknown>
  message: string
  process(image: RawImage): Promise<RawImage>
  /** Tried first when set: a provider's result, or null to process in Plaza (catalog/images/upscale.ts). */
  viaProvider?(source: SourceImage): Promise<EncodedImage | null>
}

async function answerImage({ req, res, ctx }: Exchange, source: SourceImage, job: ImageJob): Promise<void> {
  const { services } = ctx
  const queue = mediaQueue(services.config.env)
  const render = async () => (await job.viaProvider?.(source)) ?? queue.run(async () => encode(await job.process(await decode(source.bytes)), source.format))
  if (wantsJson(req.headers.accept)) {
    const ext = source.format === 'jpeg' ? 'jpg' : 'png'
    const digest = createHash('sha256').update(source.bytes).digest('base64url')
    const stored = await storeGenerated(services, {
      kind: job.kind,
      key: { image: digest, ...job.params },
      ext,
      mime: ext === 'jpg' ? 'image/jpeg' : 'image/png',
      render: async () => {
        const image = await render()
        return { body: image.data, width: image.width, height: image.height }
      },
    })
    const answer: StoredImageAnswer = { message: job.message, url: uploadUrl(ctx.origin, stored.path), path: stored.path, width: stored.width ?? 0, height: stored.height ?? 0 }
    sendJson(res, 200, answer)
    return
  }
  const image = await render()
  res.writeHead(200, {
    'content-type': image.mime,
    'content-length': image.data.byteLength,
    'x-image-width': String(image.width),
    'x-image-height': String(image.height),
    'cache-control': 'no-store',
  })
  res.end(image.data)
}

/** The image of a GET (its URL or uploads/ path) or of a POST form (its `file`), once the query is valid. */
async function sourceOf(exchange: Exchange, from: { value: string; field: string } | 'form'): Promise<SourceImage> {
  if (from === 'form') return checkImage(await readFormFile(exchange.req, IMAGE_MAX_BYTES), 'file')
  return readSourceImage(exchange.ctx.services, from.value, from.field, exchange.ctx.origin)
}

const effectJob = (effect: ImageEffectName): ImageJob => ({
  kind: 'imagefx',
  params: { effect },
  message: `Effect ${effect} applied`,
  process: (image) => applyEffect(image, effect),
})

/** With a provider that outpaints configured (AUTOMATIC1111 or OpenAI images) it draws the new area, and the stored file is named apart from Plaza's own. */
const expandJob = async (services: Services, ratio: number, asked: string): Promise<ImageJob> => {
  const layer = await outpainter(services)
  return {
    kind: 'expand',
    params: layer ? { ratio, fill: 'ai' } : { ratio },
    message: `Image expanded to the ratio ${asked.trim()}`,
    process: (image) => expand(image, ratio),
    ...(layer ? { viaProvider: (source: SourceImage) => expandWithProvider(services, layer, source, ratio) } : {}),
  }
}

/** With an AI upscaler configured (an AUTOMATIC1111 images target) it does the work, and the stored file is named apart from Plaza's own. */
const upscaleJob = async (services: Services, scale: number): Promise<ImageJob> => {
  const layer = await aiUpscaler(services)
  return {
    kind: 'upscale',
    params: layer ? { scale, upscaler: 'ai' } : { scale },
    message: `Image upscaled ${scale}x`,
    process: (image) => upscale(image, scale),
    ...(layer ? { viaProvider: (source: SourceImage) => upscaleWithProvider(services, layer, source.bytes, scale) } : {}),
  }
}

/**
 * For a POST form, whatever of the body is left unread when the request fails (the query is
 * validated first, so a bad parameter costs no upload) is dropped, as uploads do. (Each call is
 * counted in the `heavy` rate-limit class by the REST adapter, from the catalog row's cost.)
 */
const dropsBodyOnError = (handle: (exchange: Exchange) => Promise<void>) => async (exchange: Exchange) => {
  try {
    await handle(exchange)
  } catch (error) {
    discardBody(exchange.req)
    throw error
  }
}

export const handleImageFx = dropsBodyOnError(async (exchange) => {
  const input = imageFxInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, { value: input.source, field: input.field }), effectJob(input.effect))
})

export const handleImageFxForm = dropsBodyOnError(async (exchange) => {
  const input = imageFxFormInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, 'form'), effectJob(input.effect))
})

export const handleExpand = dropsBodyOnError(async (exchange) => {
  const input = expandInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, { value: input.url, field: 'url' }), await expandJob(exchange.ctx.services, input.ratio, exchange.query.ratio))
})

export const handleExpandForm = dropsBodyOnError(async (exchange) => {
  const input = expandFormInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, 'form'), await expandJob(exchange.ctx.services, input.ratio, exchange.query.ratio))
})

export const handleUpscale = dropsBodyOnError(async (exchange) => {
  const input = upscaleInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, { value: input.url, field: 'url' }), await upscaleJob(exchange.ctx.services, input.scale))
})

export const handleUpscaleForm = dropsBodyOnError(async (exchange) => {
  const input = upscaleFormInput.parse(exchange.query)
  await answerImage(exchange, await sourceOf(exchange, 'form'), await upscaleJob(exchange.ctx.services, input.scale))
})

export async function handleListEffects({ res }: Exchange): Promise<void> {
  sendJson(res, 200, {
    message: `${IMAGE_EFFECTS.length} effects`,
    effects: IMAGE_EFFECTS.map(([name, description], i) => ({ index: i + 1, name, description })),
  })
}
