/**
 * The Maker's card handlers (docs/maker.md): `GET /api/meme`, `/api/meme/templates`,
 * `/api/fakepost` and `/api/logo`. Each validates its query, reads any image input through the
 * image source helper (fetch guard or this server's uploads), renders in the Maker pool and
 * answers the PNG, or with `Accept: application/json` the stored file as
 * `{message, url, path, width, height}` under `uploads/meme|fakepost|logo/`.
 */
import { createHash } from 'node:crypto'
import { fakepostInput } from '../../../shared/schemas/fakepost.js'
import type { StoredImageAnswer } from '../../../shared/schemas/imaging.js'
import { logoInput } from '../../../shared/schemas/logo.js'
import { MEME_TEMPLATES, memeInput } from '../../../shared/schemas/meme.js'
import { wantsJson } from '../../codeimage/http.js'
import { sendJson } from '../../http.js'
import { serverTiming } from '../../workers/pool.js'
import type { Exchange } from '../../rest/adapter.js'
import { storeGenerated } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'
import { readSourceImage } from '../imaging/source.js'
import { formatPostTime } from './fakepost/render.js'
import type { CardJob } from './scene.js'

interface Card {
  kind: 'meme' | 'fakepost' | 'logo'
  job: CardJob
  /** What decides the image (the validated request, image inputs by digest): the stored file's name. */
  key: Record<string, unknown>
  message: string
}

const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64url')

async function answerCard({ req, res, ctx }: Exchange, card: Card): Promise<void> {
  const maker = ctx.services.maker
  if (wantsJson(req.headers.accept)) {
    const stored = await storeGenerated(ctx.services, {
      kind: card.kind,
      key: card.key,
      ext: 'png',
      mime: 'image/png',
      render: async () => {
        const image = await maker.render(card.job)
        return { body: image.data, width: image.width, height: image.height }
      },
    })
    const answer: StoredImageAnswer = { message: card.message, url: uploadUrl(ctx.origin, stored.path), path: stored.path, width: stored.width ?? 0, height: stored.height ?? 0 }
    sendJson(res, 200, answer)
    return
  }
  const image = await maker.render(card.job)
  res.writeHead(200, {
    'server-timing': serverTiming(image.timing),
    'content-type': 'image/png',
    'content-length': image.data.byteLength,
    'x-image-width': String(image.width),
    'x-image-height': String(image.height),
    'cache-control': 'no-store',
  })
  res.end(image.data)
}

export async function handleMeme(exchange: Exchange): Promise<void> {
  const input = memeInput.parse(exchange.query)
  const image = input.url ? await readSourceImage(exchange.ctx.services, input.url, 'url', exchange.ctx.origin) : null
  await answerCard(exchange, {
    kind: 'meme',
    job: { kind: 'meme', template: input.template ?? null, image: image?.bytes, top: input.top, bottom: input.bottom },
    key: { template: input.template, image: image ? digest(image.bytes) : undefined, top: input.top, bottom: input.bottom },
    message: input.template ? `Meme made from the template ${input.template}` : 'Meme made from the image',
  })
}

export async function handleMemeTemplates({ res }: Exchange): Promise<void> {
  sendJson(res, 200, {
    message: `${MEME_TEMPLATES.length} templates`,
    templates: MEME_TEMPLATES.map(({ id, name, width, height, boxes, example }) => ({ id, name, width, height, lines: boxes.length, example })),
  })
}

export async function handleFakepost(exchange: Exchange): Promise<void> {
  const { avatar: avatarSource, time, ...input } = fakepostInput.parse(exchange.query)
  const avatar = avatarSource ? await readSourceImage(exchange.ctx.services, avatarSource, 'avatar', exchange.ctx.origin) : null
  const shown = { ...input, time: time || formatPostTime(exchange.ctx.services.clock()) }
  await answerCard(exchange, {
    kind: 'fakepost',
    job: { kind: 'fakepost', input: shown, avatar: avatar?.bytes },
    key: { ...shown, avatar: avatar ? digest(avatar.bytes) : undefined },
    message: `Post card for @${input.username}, marked as generated`,
  })
}

export async function handleLogo(exchange: Exchange): Promise<void> {
  const input = logoInput.parse(exchange.query)
  await answerCard(exchange, { kind: 'logo', job: { kind: 'logo', input }, key: { ...input }, message: `Logo in the ${input.style} style` })
}
