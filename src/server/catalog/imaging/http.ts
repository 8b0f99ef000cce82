/**
 * The image operations' handlers (docs/imaging.md): validate the query, read the image (fetch
 * guard or this server's uploads), process it in the media queue, and answer the bytes, or with
 * `Accept: application/json` the stored file as `{message, url, path, width, height}` under
 * `uploads/imagefx|expand|upscale/`.
 */
import { createHash } from 'node:crypto'
import type { z } from 'zod'
import { expandInput, IMAGE_EFFECTS, imageFxInput, upscaleInput, type StoredImageAnswer } from '../../../shared/schemas/imaging.js'
import { wantsJson } from '../../codeimage/http.js'
import { sendJson } from '../../http.js'
import { mediaQueue } from '../../media/queue.js'
import type { Exchange } from '../../rest/adapter.js'
import { enforceRateLimit } from '../../trpc.js'
import { storeGenerated, type GeneratedKind } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'
import { expand, upscale } from './canvas.js'
import { applyEffect } from './effects.js'
import { decode, encode, type RawImage } from './pixels.js'
import { readSourceImage } from './source.js'

interface ImageJob {
  kind: GeneratedKind & ('imagefx' | 'expand' | 'upscale')
  source: string
  field: string
  /** What, besides the image's bytes, decides the result: part of the stored file's name. */
  params: Record<string, unknown>
  message: string
  process(image: RawImage): Promise<RawImage>
}

function parse<S extends z.ZodType>(schema: S, query: Record<string, string>): z.output<S> {
  return schema.parse(query)
}

async function answerImage({ req, res, ctx }: Exchange, job: ImageJob): Promise<void> {
  const { services } = ctx
  const source = await readSourceImage(services, job.source, job.field, ctx.origin)
  const queue = mediaQueue(services.config.env)
  const render = () => queue.run(async () => encode(await job.process(await decode(source.bytes)), source.format))
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

export async function handleImageFx(exchange: Exchange): Promise<void> {
  await enforceRateLimit(exchange.ctx, 'default', `ip:${exchange.ctx.clientAddress}`)
  const input = parse(imageFxInput, exchange.query)
  await answerImage(exchange, {
    kind: 'imagefx',
    source: input.source,
    field: input.field,
    params: { effect: input.effect },
    message: `Effect ${input.effect} applied`,
    process: (image) => applyEffect(image, input.effect),
  })
}

export async function handleListEffects({ res }: Exchange): Promise<void> {
  sendJson(res, 200, {
    message: `${IMAGE_EFFECTS.length} effects`,
    effects: IMAGE_EFFECTS.map(([name, description], i) => ({ index: i + 1, name, description })),
  })
}

export async function handleExpand(exchange: Exchange): Promise<void> {
  await enforceRateLimit(exchange.ctx, 'default', `ip:${exchange.ctx.clientAddress}`)
  const input = parse(expandInput, exchange.query)
  await answerImage(exchange, {
    kind: 'expand',
    source: input.url,
    field: 'url',
    params: { ratio: input.ratio },
    message: `Image expanded to the ratio ${exchange.query.ratio.trim()}`,
    process: (image) => expand(image, input.ratio),
  })
}

export async function handleUpscale(exchange: Exchange): Promise<void> {
  await enforceRateLimit(exchange.ctx, 'default', `ip:${exchange.ctx.clientAddress}`)
  const input = parse(upscaleInput, exchange.query)
  await answerImage(exchange, {
    kind: 'upscale',
    source: input.url,
    field: 'url',
    params: { scale: input.scale },
    message: `Image upscaled ${input.scale}x`,
    process: (image) => upscale(image, input.scale),
  })
}
