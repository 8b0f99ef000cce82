/**
 * The image protocols: OpenAI's images API (`/images/generations`, `/images/edits`; `b64_json` and
 * `url` answers), AUTOMATIC1111's web UI API (`/sdapi/v1/txt2img`, `img2img`, `extra-single-image`)
 * and a hosted-inference protocol in Hugging Face's style (`POST /models/{model}` with `{inputs}`,
 * image bytes back). Each returns the upstream's bytes as they came: the caller checks them
 * (`checkUpstreamImage`) before anything else is done with them.
 */
import type { FormData as UndiciFormData } from 'undici'
import type { ImageModelAlias } from '../../shared/schemas/images.js'
import type { ServiceTarget } from './config.js'
import { UpstreamError } from './errors.js'
import type { Attempt } from './layer.js'
import { lookup } from '../../shared/lookup.js'

/** The image-to-image operations, which are also keys of a target's `models` map. */
export type ImageOperation = 'toanime' | 'zombie'

/** The fixed prompt of each image-to-image operation. */
export const IMAGE_TO_IMAGE_PROMPTS: Record<ImageOperation, { prompt: string; negative: string }> = {
  toanime: {
    prompt: 'anime style illustration of the same picture, cel shading, clean line art, vibrant colours, detailed anime face',
    negative: 'photo, photorealistic, 3d render, blurry, deformed',
  },
  zombie: {
    prompt: 'the same person as a zombie, pale green rotting skin, dark sunken eyes, cracked lips, horror film make-up, same pose and framing',
    negative: 'cartoon, blurry, deformed hands, extra limbs',
  },
}

/** The upstream model for an alias when the operator maps none: per protocol. AUTOMATIC1111 keeps its loaded checkpoint. */
const DEFAULT_MODELS: Record<Extract<ServiceTarget['protocol'], 'openai-images' | 'hf-inference'>, Record<string, string>> = {
  'openai-images': { 'dalle-2': 'dall-e-2', 'dalle-3': 'dall-e-3', 'gpt-image': 'gpt-image-1', toanime: 'dall-e-2', zombie: 'dall-e-2', expand: 'dall-e-2' },
  'hf-inference': {
    'flux-schnell': 'black-forest-labs/FLUX.1-schnell',
    'flux-dev': 'black-forest-labs/FLUX.1-dev',
    sdxl: 'stabilityai/stable-diffusion-xl-base-1.0',
    'sdxl-turbo': 'stabilityai/sdxl-turbo',
    sd3: 'stabilityai/stable-diffusion-3-medium-diffusers',
    sd15: 'stable-diffusion-v1-5/stable-diffusion-v1-5',
    playground: 'playgroundai/playground-v2.5-1024px-aesthetic',
    anime: 'cagliostrolab/animagine-xl-3.1',
    toanime: 'timbrooks/instruct-pix2pix',
    zombie: 'timbrooks/instruct-pix2pix',
  },
}

/** The upstream model that serves `alias` at `target`: the operator's map, its one model, the protocol's default, or the alias itself. */
export function upstreamModel(target: ServiceTarget, alias: string): string | undefined {
  const mapped = lookup(target.models, alias) ?? target.model
  if (mapped) return mapped
  if (target.protocol === 'automatic1111') return undefined
  return DEFAULT_MODELS[target.protocol as keyof typeof DEFAULT_MODELS]?.[alias] ?? alias
}

export interface GenerateRequest {
  prompt: string
  alias: ImageModelAlias
  n: number
  width?: number
  height?: number
  negativePrompt?: string
}

/** Fetches an image an upstream answered by URL (OpenAI's `url` format): the layer's pool for the provider's own host, the fetch guard elsewhere. */
export type FetchImageUrl = (url: string, call: Attempt) => Promise<Buffer>

/** The most bytes one upstream answer may carry: a few full-size base64 images. */
export const UPSTREAM_IMAGE_MAX_BYTES = 48 * 1024 * 1024

const authorization = (target: ServiceTarget): Record<string, string> => {
  if (!target.apiKey) return {}
  // AUTOMATIC1111's --api-auth is HTTP basic (user:password); everything else takes a bearer token.
  if (target.protocol === 'automatic1111' && target.apiKey.includes(':')) return { authorization: `Basic ${Buffer.from(target.apiKey).toString('base64')}` }
  return { authorization: `Bearer ${target.apiKey}` }
}
const headersOf = (target: ServiceTarget, extra: Record<string, string> = {}) => ({ ...target.headers, ...authorization(target), ...extra })

const malformed = (call: Attempt, what: string) => new UpstreamError('protocol', `${call.label} answered ${what}`)

function base64Image(value: unknown, call: Attempt): Buffer {
  if (typeof value !== 'string' || value.length === 0) throw malformed(call, 'no image where one was expected')
  // AUTOMATIC1111 may prefix a data URL header.
  const text = value.replace(/^data:[^,]*,/, '')
  if (!/^[A-Za-z0-9+/=\s_-]+$/.test(text)) throw malformed(call, 'an image that is not base64')
  return Buffer.from(text, 'base64')
}

/** OpenAI's `data: [{b64_json} | {url}]`, each fetched when a URL. */
async function openaiImages(body: any, call: Attempt, fetchUrl: FetchImageUrl): Promise<Buffer[]> {
  if (!body || !Array.isArray(body.data) || body.data.length === 0) throw malformed(call, 'no `data` list of images')
  return Promise.all(
    body.data.map((item: any) => {
      if (typeof item?.b64_json === 'string') return base64Image(item.b64_json, call)
      if (typeof item?.url === 'string') return fetchUrl(item.url, call)
      throw malformed(call, 'an image with neither b64_json nor url')
    }),
  )
}

function formOf(fields: Record<string, string>, file: { name: string; bytes: Buffer; field: string; type: string }, FormData: typeof UndiciFormData): UndiciFormData {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  form.append(file.field, new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name)
  return form
}

/** Text to image on one target; the bytes of each image, unchecked. */
export async function generateImages(call: Attempt, request: GenerateRequest, fetchUrl: FetchImageUrl): Promise<Buffer[]> {
  const { target } = call
  const model = upstreamModel(target, request.alias)
  const size = request.width && request.height ? { width: request.width, height: request.height } : undefined
  switch (target.protocol) {
    case 'openai-images': {
      const response = await call.request({
        url: `${target.baseUrl}/images/generations`,
        headers: headersOf(target),
        body: {
          json: {
            model,
            prompt: request.prompt,
            n: request.n,
            ...(size ? { size: `${size.width}x${size.height}` } : {}),
            // GPT Image always answers base64 and refuses the field.
            ...(/^gpt-image/.test(model ?? '') ? {} : { response_format: 'b64_json' }),
          },
        },
      })
      return openaiImages(await response.json(UPSTREAM_IMAGE_MAX_BYTES), call, fetchUrl)
    }
    case 'automatic1111': {
      const response = await call.request({
        url: `${target.baseUrl}/sdapi/v1/txt2img`,
        headers: headersOf(target),
        body: {
          json: {
            prompt: request.prompt,
            negative_prompt: request.negativePrompt ?? '',
            batch_size: request.n,
            n_iter: 1,
            ...(size ?? {}),
            ...(model ? { override_settings: { sd_model_checkpoint: model }, override_settings_restore_afterwards: true } : {}),
          },
        },
      })
      const body = await response.json(UPSTREAM_IMAGE_MAX_BYTES)
      if (!Array.isArray(body?.images) || body.images.length === 0) throw malformed(call, 'no `images` list')
      // Some scripts append extra images (grids, masks): the first n are the ones asked for.
      return body.images.slice(0, request.n).map((image: unknown) => base64Image(image, call))
    }
    case 'hf-inference': {
      const one = async () =>
        (
          await call.request({
            url: `${target.baseUrl}/models/${model}`,
            headers: headersOf(target, { accept: 'image/png' }),
            body: { json: { inputs: request.prompt, parameters: { ...(size ?? {}), ...(request.negativePrompt ? { negative_prompt: request.negativePrompt } : {}) } } },
          })
        ).bytes(UPSTREAM_IMAGE_MAX_BYTES)
      const images: Buffer[] = []
      for (let i = 0; i < request.n; i++) images.push(await one())
      return images
    }
    default:
      throw new Error(`${target.protocol} is not an image protocol`)
  }
}

/** OpenAI's `/images/edits`: one image (PNG; transparent pixels are the area to redraw) and a prompt; the first image answered. */
async function openaiEdit(call: Attempt, png: Buffer, prompt: string, model: string | undefined, fetchUrl: FetchImageUrl): Promise<Buffer> {
  const { FormData } = await import('undici')
  const fields: Record<string, string> = { prompt, n: '1', ...(model ? { model } : {}), ...(/^gpt-image/.test(model ?? '') ? {} : { response_format: 'b64_json' }) }
  const response = await call.request({
    url: `${call.target.baseUrl}/images/edits`,
    headers: headersOf(call.target),
    body: { form: formOf(fields, { field: 'image', name: 'image.png', bytes: png, type: 'image/png' }, FormData) },
  })
  return (await openaiImages(await response.json(UPSTREAM_IMAGE_MAX_BYTES), call, fetchUrl))[0]
}

/** AUTOMATIC1111's `/sdapi/v1/img2img` from one PNG, with `extra` fields (a mask, the denoising strength); the first image answered. */
async function a1111Img2Img(call: Attempt, image: { png: Buffer; width: number; height: number }, prompt: string, negative: string, model: string | undefined, extra: Record<string, unknown>): Promise<Buffer> {
  // Sides rounded down to multiples of 8, as Stable Diffusion's latent space needs.
  const side = (n: number) => Math.max(64, Math.floor(n / 8) * 8)
  const response = await call.request({
    url: `${call.target.baseUrl}/sdapi/v1/img2img`,
    headers: headersOf(call.target),
    body: {
      json: {
        init_images: [image.png.toString('base64')],
        prompt,
        negative_prompt: negative,
        width: side(image.width),
        height: side(image.height),
        ...extra,
        ...(model ? { override_settings: { sd_model_checkpoint: model }, override_settings_restore_afterwards: true } : {}),
      },
    },
  })
  const body = await response.json(UPSTREAM_IMAGE_MAX_BYTES)
  if (!Array.isArray(body?.images) || body.images.length === 0) throw malformed(call, 'no `images` list')
  return base64Image(body.images[0], call)
}

/** Image to image with the operation's fixed prompt, on one target; the bytes, unchecked. `image` is PNG. */
export async function transformImage(call: Attempt, operation: ImageOperation, image: { png: Buffer; width: number; height: number }, fetchUrl: FetchImageUrl): Promise<Buffer> {
  const { target } = call
  const model = upstreamModel(target, operation)
  const { prompt, negative } = IMAGE_TO_IMAGE_PROMPTS[operation]
  switch (target.protocol) {
    case 'openai-images':
      return openaiEdit(call, image.png, prompt, model, fetchUrl)
    case 'automatic1111':
      return a1111Img2Img(call, image, prompt, negative, model, { denoising_strength: 0.55 })
    case 'hf-inference': {
      const response = await call.request({
        url: `${target.baseUrl}/models/${model}`,
        headers: headersOf(target, { accept: 'image/png' }),
        body: { json: { inputs: image.png.toString('base64'), parameters: { prompt, negative_prompt: negative } } },
      })
      return response.bytes(UPSTREAM_IMAGE_MAX_BYTES)
    }
    default:
      throw new Error(`${target.protocol} is not an image protocol`)
  }
}

/** The prompt of generative expansion (outpainting): continue what is there, add nothing that calls attention. */
export const OUTPAINT_PROMPT = {
  prompt: 'seamless continuation of the surrounding scene, same style, lighting, colours and perspective',
  negative: 'border, frame, seam, text, watermark, signature, duplicate subject',
}

/** A canvas to outpaint: the image placed on it, and which pixels are new. */
export interface OutpaintCanvas {
  /** Opaque PNG of the whole canvas: the image centred over a blurred fill of itself (a start for the new area). */
  png: Buffer
  /** PNG, white where the provider draws (the new area), black where the image is. AUTOMATIC1111's convention. */
  mask: Buffer
  /** The same canvas as RGBA PNG, the new area fully transparent: OpenAI's edits take the mask from the alpha channel. */
  transparent: Buffer
  width: number
  height: number
}

/**
 * Generative expansion (outpainting) on one target: AUTOMATIC1111's `img2img` with a mask (inpainting
 * the new area, started from the blurred fill) or OpenAI's `/images/edits` (the transparent area
 * redrawn). The hosted-inference protocol has no mask: such a target is passed over.
 */
export async function outpaintImage(call: Attempt, canvas: OutpaintCanvas, fetchUrl: FetchImageUrl): Promise<Buffer> {
  const model = upstreamModel(call.target, 'expand')
  const { prompt, negative } = OUTPAINT_PROMPT
  switch (call.target.protocol) {
    case 'openai-images':
      return openaiEdit(call, canvas.transparent, prompt, model, fetchUrl)
    case 'automatic1111':
      // inpainting_fill 1 ("original"): the masked area starts from the blurred fill rather than noise, which keeps the colours.
      return a1111Img2Img(call, canvas, prompt, negative, model, { mask: canvas.mask.toString('base64'), mask_blur: 8, inpainting_fill: 1, inpaint_full_res: false, denoising_strength: 0.9 })
    default:
      throw new UpstreamError('protocol', `${call.label} does not expand images (no mask in its protocol)`)
  }
}

/** AI upscaling with AUTOMATIC1111's `extra-single-image` (an ESRGAN-family upscaler); the bytes, unchecked. */
export async function upscaleImage(call: Attempt, png: Buffer, scale: number): Promise<Buffer> {
  const { target } = call
  const response = await call.request({
    url: `${target.baseUrl}/sdapi/v1/extra-single-image`,
    headers: headersOf(target),
    body: { json: { image: png.toString('base64'), resize_mode: 0, upscaling_resize: scale, upscaler_1: target.models.upscaler ?? 'R-ESRGAN 4x+' } },
  })
  const body = await response.json(UPSTREAM_IMAGE_MAX_BYTES)
  return base64Image(body?.image, call)
}

/** Background removal: remove.bg's `POST /v1.0/removebg` (key in `X-Api-Key`) or rembg's server `POST /api/remove`; PNG with transparency back. */
export async function removeBackground(call: Attempt, png: Buffer): Promise<Buffer> {
  const { target } = call
  const { FormData } = await import('undici')
  if (target.protocol === 'removebg') {
    const response = await call.request({
      url: `${target.baseUrl}/v1.0/removebg`,
      headers: { ...target.headers, ...(target.apiKey ? { 'x-api-key': target.apiKey } : {}), accept: 'image/png' },
      body: { form: formOf({ size: 'auto', format: 'png' }, { field: 'image_file', name: 'image.png', bytes: png, type: 'image/png' }, FormData) },
    })
    return response.bytes(UPSTREAM_IMAGE_MAX_BYTES)
  }
  if (target.protocol === 'rembg') {
    const response = await call.request({
      url: `${target.baseUrl}/api/remove`,
      headers: headersOf(target),
      body: { form: formOf({}, { field: 'file', name: 'image.png', bytes: png, type: 'image/png' }, FormData) },
    })
    return response.bytes(UPSTREAM_IMAGE_MAX_BYTES)
  }
  throw new Error(`${target.protocol} is not a background-removal protocol`)
}
