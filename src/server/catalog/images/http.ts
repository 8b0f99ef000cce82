/**
 * The image generators' and provider-backed image operations' handlers (docs/images.md):
 * `GET /api/imagine`, `POST /api/v1/images/generations` (OpenAI's request and answer, OpenAI's
 * error shape), `GET /api/toanime`, `/api/zombie`, `/api/removebg`. Images are answered as bytes,
 * or with `Accept: application/json` stored under `uploads/<kind>/` and described.
 */
import { imageGenerationsInput, imageSourceInput, imagineInput, type ImagineAnswer } from '../../../shared/schemas/images.js'
import { GatewayError } from '../../chat/errors.js'
import { authorizeGatewayCall, sendChatError } from '../../chat/http.js'
import type { GatewayPass } from '../../chat/keys/access.js'
import { wantsJson } from '../../codeimage/http.js'
import { closedSignal, readJson, sendJson } from '../../http.js'
import { ClientAbortError, ProviderError } from '../../providers/errors.js'
import type { ImageOperation } from '../../providers/images.js'
import { providerLayerOf } from '../../providers/layer.js'
import type { Exchange } from '../../rest/adapter.js'
import { enforceRateLimit } from '../../trpc.js'
import type { GeneratedKind } from '../../uploads/generated.js'
import { readSourceImage } from '../imaging/source.js'
import type { EncodedImage } from '../imaging/pixels.js'
import { generate, imageToImage, removeImageBackground, type ImageDeps } from './generate.js'
import { storeImage } from './result.js'

async function depsOf(exchange: Exchange): Promise<ImageDeps> {
  const { services } = exchange.ctx
  return { layer: await providerLayerOf(services), env: services.config.env, allowPrivate: services.config.fetchAllowPrivate }
}

/** The catalog's operations are limited per client address (the OpenAI-compatible route by the gateway's gate instead). */
const limit = (exchange: Exchange) => enforceRateLimit(exchange.ctx, 'default', `ip:${exchange.ctx.clientAddress}`)

/** The image as bytes, or stored and described when JSON is asked for. */
async function answerImage(exchange: Exchange, kind: GeneratedKind, image: EncodedImage, message: string, extra: Record<string, unknown> = {}, provider?: string): Promise<void> {
  const { req, res, ctx } = exchange
  // Which target drew it (`images/env`, `images/images.1`): after a fallback the operator can tell.
  const headers: Record<string, string> = provider ? { 'x-plaza-provider': provider } : {}
  if (wantsJson(req.headers.accept)) {
    const stored = await storeImage(ctx.services, ctx.origin, kind, image)
    sendJson(res, 200, { message, ...stored, ...extra }, headers)
    return
  }
  res.writeHead(200, {
    ...headers,
    'content-type': image.mime,
    'content-length': image.data.byteLength,
    'x-image-width': String(image.width),
    'x-image-height': String(image.height),
    'cache-control': 'no-store',
  })
  res.end(image.data)
}

export async function handleImagine(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const input = imagineInput.parse(exchange.query)
  const { images, provider } = await generate(await depsOf(exchange), { prompt: input.prompt, alias: input.model, n: 1, ...(input.size ?? {}) }, closedSignal(exchange.res))
  const extra: Pick<ImagineAnswer, 'model'> = { model: input.model }
  await answerImage(exchange, 'imagine', images[0], `Image generated with ${input.model}`, extra, `images/${provider}`)
}

/** OpenAI's error shape with the provider layer's codes (OpenAI's clients raise by status). */
function sendOpenAiError(exchange: Exchange, error: unknown) {
  const translated = error instanceof ProviderError ? new GatewayError(error.status, error.reason, error.message) : error
  sendChatError(exchange, 'openai', translated)
}

/**
 * `POST /api/v1/images/generations`: OpenAI's images API, so OpenAI's clients' `images.generate`
 * works against Plaza. Under /api/v1 it is the gateway's: the same keys (once any exists, one is
 * required), allow-lists (by model alias) and request counts as chat (docs/chat.md#keys).
 */
export async function handleImageGenerations(exchange: Exchange): Promise<void> {
  let admitted: { pass: GatewayPass; model: string } | undefined
  try {
    const pass = await authorizeGatewayCall(exchange.ctx)
    const input = imageGenerationsInput.parse(await readJson(exchange.req))
    await pass.admit(input.model)
    admitted = { pass, model: input.model }
    const { images } = await generate(
      await depsOf(exchange),
      { prompt: input.prompt, alias: input.model, n: input.n, negativePrompt: input.negative_prompt, ...(input.size ?? {}) },
      closedSignal(exchange.res),
    )
    const { services } = exchange.ctx
    const data = await Promise.all(
      images.map(async (image) =>
        input.response_format === 'b64_json' ? { b64_json: image.data.toString('base64') } : { url: (await storeImage(services, exchange.ctx.origin, 'imagine', image)).url },
      ),
    )
    admitted = undefined
    pass.settle(input.model, { failed: false })
    sendJson(exchange.res, 200, { created: Math.floor(services.clock().getTime() / 1000), data })
  } catch (error) {
    admitted?.pass.settle(admitted.model, { failed: !(error instanceof ClientAbortError) })
    if (error instanceof ClientAbortError) return void exchange.res.destroy()
    sendOpenAiError(exchange, error)
  }
}

const imageToImageHandler = (operation: ImageOperation, message: string) => async (exchange: Exchange) => {
  await limit(exchange)
  const input = imageSourceInput.parse(exchange.query)
  const deps = await depsOf(exchange)
  // Nothing is fetched when no provider could serve it.
  deps.layer.require('images')
  const source = await readSourceImage(exchange.ctx.services, input.url, 'url', exchange.ctx.origin)
  await answerImage(exchange, operation, await imageToImage(deps, operation, source.bytes, closedSignal(exchange.res)), message)
}

export const handleToAnime = imageToImageHandler('toanime', 'Anime version made')
export const handleZombie = imageToImageHandler('zombie', 'Zombie version made')

export async function handleRemoveBg(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const input = imageSourceInput.parse(exchange.query)
  const deps = await depsOf(exchange)
  deps.layer.require('removebg')
  const source = await readSourceImage(exchange.ctx.services, input.url, 'url', exchange.ctx.origin)
  await answerImage(exchange, 'removebg', await removeImageBackground(deps, source.bytes, closedSignal(exchange.res)), 'Background removed')
}
