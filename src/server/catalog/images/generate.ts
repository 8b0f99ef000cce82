/**
 * The image operations as functions (input in, checked and re-encoded images out), shared by the
 * HTTP handlers and `plaza util imagine` (embedded): every call goes through the provider layer
 * (retries, fallbacks, 502/503/504), and every image a provider answers is checked before it counts.
 */
import { guardedFetch } from '../../fetch-guard.js'
import { UpstreamError } from '../../providers/errors.js'
import { generateImages, removeBackground, transformImage, UPSTREAM_IMAGE_MAX_BYTES, type FetchImageUrl, type GenerateRequest, type ImageOperation } from '../../providers/images.js'
import type { ProviderLayer } from '../../providers/layer.js'
import type { EncodedImage } from '../imaging/pixels.js'
import { checkUpstreamImage, preparePng, reencode, type CheckedImage } from './result.js'

export interface ImageDeps {
  layer: ProviderLayer
  /** For the media queue's settings. */
  env: NodeJS.ProcessEnv
  /** The fetch guard's `PLAZA_FETCH_ALLOW_PRIVATE`, for images a provider answers by URL on another host. */
  allowPrivate: boolean
}

export interface Generated {
  images: EncodedImage[]
  /** `<service>.<n>` or `env`: the target that answered. */
  provider: string
}

/** Image inputs sent to an image-to-image provider are fitted inside this (Stable Diffusion works near 512-1024). */
const IMAGE_TO_IMAGE_SIDE = 1024
const REMOVEBG_SIDE = 2048

/** A URL in a provider's answer: its own host through the layer's pool, anything else through the fetch guard. */
export function fetchImageUrl(allowPrivate: boolean): FetchImageUrl {
  return async (url, call) => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new UpstreamError('protocol', `${call.label} answered an image URL that is not a URL`)
    }
    if (parsed.origin === new URL(call.target.baseUrl).origin) {
      return (await call.request({ method: 'GET', url, headers: call.target.headers })).bytes(UPSTREAM_IMAGE_MAX_BYTES)
    }
    try {
      return (await guardedFetch(url, { field: 'url', allowPrivate, maxBytes: UPSTREAM_IMAGE_MAX_BYTES })).bytes
    } catch (error) {
      throw new UpstreamError('protocol', `${call.label} answered an image URL Plaza could not fetch: ${(error as Error).message}`)
    }
  }
}

/** Text to image: `request.n` images from the first provider that gives them all. */
export async function generate(deps: ImageDeps, request: GenerateRequest, signal?: AbortSignal): Promise<Generated> {
  const fetchUrl = fetchImageUrl(deps.allowPrivate)
  const { value, target } = await deps.layer.call(
    'images',
    async (call) => {
      const images = await generateImages(call, request, fetchUrl)
      if (images.length < request.n) throw new UpstreamError('protocol', `${call.label} answered ${images.length} image(s) where ${request.n} were asked`)
      const checked: CheckedImage[] = []
      for (const bytes of images) checked.push(await checkUpstreamImage(call, bytes))
      return checked
    },
    signal,
  )
  return { images: await Promise.all(value.map((image) => reencode(deps.env, image))), provider: target.name }
}

/** Image to image with the operation's fixed prompt (toanime, zombie). */
export async function imageToImage(deps: ImageDeps, operation: ImageOperation, source: Buffer, signal?: AbortSignal): Promise<EncodedImage> {
  const input = await preparePng(deps.env, source, IMAGE_TO_IMAGE_SIDE)
  const fetchUrl = fetchImageUrl(deps.allowPrivate)
  const { value } = await deps.layer.call('images', async (call) => checkUpstreamImage(call, await transformImage(call, operation, input, fetchUrl)), signal)
  return reencode(deps.env, value)
}

/** The image with its background made transparent (PNG). */
export async function removeImageBackground(deps: ImageDeps, source: Buffer, signal?: AbortSignal): Promise<EncodedImage> {
  const input = await preparePng(deps.env, source, REMOVEBG_SIDE)
  const { value } = await deps.layer.call('removebg', async (call) => checkUpstreamImage(call, await removeBackground(call, input.png)), signal)
  return reencode(deps.env, value)
}
