/** `GET /api/diffuser/expand` and `GET /api/upscale`: the image on a wider or taller canvas, or larger. */
import { TRPCError } from '@trpc/server'
import { MAX_OUTPUT_SIDE } from '../../../shared/schemas/imaging.js'
import { stage, type RawImage } from './pixels.js'

/** The canvas for `ratio` that holds the whole image: one side kept, the other extended. */
export function expandedSize(width: number, height: number, ratio: number): { width: number; height: number } {
  const wider = width / height < ratio
  const size = wider ? { width: Math.round(height * ratio), height } : { width, height: Math.round(width / ratio) }
  // Past the side limit the whole composition is scaled down rather than refused: the ratio is what was asked for.
  const shrink = Math.min(1, MAX_OUTPUT_SIDE / Math.max(size.width, size.height))
  return { width: Math.max(1, Math.round(size.width * shrink)), height: Math.max(1, Math.round(size.height * shrink)) }
}

/**
 * The image centred on a canvas of `ratio`, over a fill made of the image itself: scaled to cover
 * the canvas, blurred and darkened, so the new area reads as background. The blur runs at an
 * eighth of the size (a wide blur at full size costs seconds for the same look).
 */
export async function expand(image: RawImage, ratio: number): Promise<RawImage> {
  const canvas = expandedSize(image.info.width, image.info.height, ratio)
  // Below 1 only when the canvas was scaled down to the side limit.
  const scale = Math.min(1, canvas.width / image.info.width, canvas.height / image.info.height)
  const fitted = {
    width: Math.min(canvas.width, Math.max(1, Math.round(image.info.width * scale))),
    height: Math.min(canvas.height, Math.max(1, Math.round(image.info.height * scale))),
  }
  const opaque = image.info.channels === 4 ? await stage(image, (p) => p.removeAlpha()) : image
  const small = await stage(opaque, (p) =>
    p.resize(Math.max(1, Math.ceil(canvas.width / 8)), Math.max(1, Math.ceil(canvas.height / 8)), { fit: 'cover' }),
  )
  const fill = await stage(small, (p) => p.blur(Math.max(0.3, Math.max(small.info.width, small.info.height) / 40)).modulate({ brightness: 0.55 }))
  const foreground = fitted.width === image.info.width && fitted.height === image.info.height ? image : await stage(image, (p) => p.resize(fitted.width, fitted.height, { fit: 'fill' }))
  const composed = await stage(fill, (p) =>
    p.resize(canvas.width, canvas.height, { fit: 'fill' }).composite([
      {
        input: foreground.data,
        raw: foreground.info,
        left: Math.floor((canvas.width - fitted.width) / 2),
        top: Math.floor((canvas.height - fitted.height) / 2),
      },
    ]),
  )
  return composed.info.channels === 4 ? stage(composed, (p) => p.removeAlpha()) : composed
}

/** Lanczos3 resampling to `scale` times the size, then a mild unsharp mask for the softness enlarging leaves. */
export async function upscale(image: RawImage, scale: number): Promise<RawImage> {
  const width = image.info.width * scale
  const height = image.info.height * scale
  if (width > MAX_OUTPUT_SIDE || height > MAX_OUTPUT_SIDE) {
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message: `scale: ${image.info.width}×${image.info.height} at ${scale}x would be ${width}×${height} pixels; results are at most ${MAX_OUTPUT_SIDE} px a side`,
    })
  }
  // One pipeline: sharp sharpens after resizing whatever the call order, and a 8192² raw stage between them would cost 256 MiB more.
  return stage(image, (p) => p.resize(width, height, { kernel: 'lanczos3', fit: 'fill' }).sharpen({ sigma: 0.8, m1: 0.5, m2: 1.5 }))
}
