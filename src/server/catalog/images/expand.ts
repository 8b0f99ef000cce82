/**
 * Generative expansion for `/api/diffuser/expand` (docs/imaging.md): when an images target speaks a
 * protocol with a mask (AUTOMATIC1111's img2img, OpenAI's edits), the provider draws the new area
 * (outpainting) and the original pixels are put back on top at full size; when none does, or every
 * one fails, the operation expands over a blurred fill in Plaza as before.
 */
import sharp from 'sharp'
import { mediaQueue } from '../../media/queue.js'
import { ProviderError } from '../../providers/errors.js'
import { outpaintImage, type OutpaintCanvas } from '../../providers/images.js'
import type { ProviderLayer } from '../../providers/layer.js'
import type { Services } from '../../services.js'
import { expand, expandedSize } from '../imaging/canvas.js'
import { decode, encode, stage, type EncodedImage, type RawImage } from '../imaging/pixels.js'
import type { SourceImage } from '../imaging/source.js'
import { fetchImageUrl } from './generate.js'
import { checkUpstreamImage } from './result.js'

/** The canvas sent to the provider fits inside this (Stable Diffusion and DALL·E 2 work near 512-1024). */
const OUTPAINT_SIDE = 1024

const OUTPAINTING = new Set(['automatic1111', 'openai-images'])

/** The layer, when one of its images targets can outpaint; null otherwise (an invalid configuration too: local expansion still works). */
export async function outpainter(services: Services): Promise<ProviderLayer | null> {
  let layer: ProviderLayer
  try {
    layer = await services.providers()
  } catch {
    return null
  }
  return layer.config.services.get('images')?.some((target) => OUTPAINTING.has(target.protocol)) ? layer : null
}

/** Where an image of `width` × `height` sits, centred, on the canvas of `ratio` (as canvas.ts places it; no side limit reached). */
function placement(width: number, height: number, ratio: number) {
  const canvas = expandedSize(width, height, ratio)
  const scale = Math.min(1, canvas.width / width, canvas.height / height)
  const fitted = { width: Math.min(canvas.width, Math.max(1, Math.round(width * scale))), height: Math.min(canvas.height, Math.max(1, Math.round(height * scale))) }
  return { canvas, fitted, left: Math.floor((canvas.width - fitted.width) / 2), top: Math.floor((canvas.height - fitted.height) / 2) }
}

/** The provider's canvas: the image (fitted inside OUTPAINT_SIDE) expanded over its blurred fill, the mask of the new area, and the same with that area transparent. */
export async function outpaintCanvas(image: RawImage, ratio: number): Promise<OutpaintCanvas> {
  const full = expandedSize(image.info.width, image.info.height, ratio)
  const shrink = Math.min(1, OUTPAINT_SIDE / Math.max(full.width, full.height))
  const small = shrink < 1 ? await stage(image, (p) => p.resize(Math.max(1, Math.round(image.info.width * shrink)), Math.max(1, Math.round(image.info.height * shrink)), { fit: 'fill' })) : image
  const start = await expand(small, ratio)
  const { width, height } = start.info
  const at = placement(small.info.width, small.info.height, ratio)
  const hole = { width: at.fitted.width, height: at.fitted.height }
  const png = await sharp(start.data, { raw: start.info }).png().toBuffer()
  const mask = await sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite([{ input: { create: { ...hole, channels: 3, background: '#000000' } }, left: at.left, top: at.top }])
    .png()
    .toBuffer()
  // Alpha: 0 over the new area, 255 over the image.
  const alpha = Buffer.alloc(width * height)
  for (let y = at.top; y < at.top + hole.height; y++) alpha.fill(255, y * width + at.left, y * width + at.left + hole.width)
  const transparent = await sharp(start.data, { raw: start.info }).removeAlpha().joinChannel(alpha, { raw: { width, height, channels: 1 } }).png().toBuffer()
  return { png, mask, transparent, width, height }
}

/** The provider's drawing at the full canvas size, with the original image put back, unchanged, where it belongs. */
async function composeResult(drawn: Buffer, image: RawImage, ratio: number): Promise<RawImage> {
  const at = placement(image.info.width, image.info.height, ratio)
  const background = await decode(drawn)
  const resized = await stage(background, (p) => p.removeAlpha().resize(at.canvas.width, at.canvas.height, { fit: 'fill' }))
  const foreground = at.fitted.width === image.info.width && at.fitted.height === image.info.height ? image : await stage(image, (p) => p.resize(at.fitted.width, at.fitted.height, { fit: 'fill' }))
  const composed = await stage(resized, (p) => p.composite([{ input: foreground.data, raw: foreground.info, left: at.left, top: at.top }]))
  return composed.info.channels === 4 ? stage(composed, (p) => p.removeAlpha()) : composed
}

/** The image expanded by the provider, or null when it could not be (then Plaza expands it itself). */
export async function expandWithProvider(services: Services, layer: ProviderLayer, source: SourceImage, ratio: number): Promise<EncodedImage | null> {
  const queue = mediaQueue(services.config.env)
  const image = await queue.run(() => decode(source.bytes))
  const canvas = await queue.run(() => outpaintCanvas(image, ratio))
  const fetchUrl = fetchImageUrl(services.config.fetchAllowPrivate)
  try {
    const { value } = await layer.call('images', async (call) => checkUpstreamImage(call, await outpaintImage(call, canvas, fetchUrl)))
    return await queue.run(async () => encode(await composeResult(value.bytes, image, ratio), source.format))
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error
    services.logger.warn('generative expansion failed; expanding in Plaza', { message: error.message })
    return null
  }
}
