/**
 * The image generators and provider-backed image operations (docs/images.md): `GET /api/imagine`,
 * `POST /api/v1/images/generations` (OpenAI-compatible), `GET /api/toanime`, `/api/zombie` and
 * `/api/removebg`. Their inputs and the model aliases, shared by the server and the CLI.
 */
import { z } from 'zod'
import { lookup } from '../lookup.js'

/**
 * The eleven model aliases of `/api/imagine`, each with what it names. The operator maps each to an
 * upstream model per provider (`models:` in the config file); docs/images.md lists the defaults.
 */
export const IMAGE_MODELS = [
  ['flux-schnell', 'FLUX.1 [schnell]: fast, few steps (the default)'],
  ['flux-dev', 'FLUX.1 [dev]: slower, more detail'],
  ['sdxl', 'Stable Diffusion XL 1.0'],
  ['sdxl-turbo', 'SDXL Turbo: one to four steps'],
  ['sd3', 'Stable Diffusion 3 Medium'],
  ['sd15', 'Stable Diffusion 1.5'],
  ['playground', 'Playground v2.5, aesthetic'],
  ['anime', 'An anime-style SDXL model (Animagine XL)'],
  ['dalle-2', "OpenAI's DALL·E 2"],
  ['dalle-3', "OpenAI's DALL·E 3"],
  ['gpt-image', "OpenAI's GPT Image"],
] as const satisfies ReadonlyArray<readonly [string, string]>

export type ImageModelAlias = (typeof IMAGE_MODELS)[number][0]
export const IMAGE_MODEL_ALIASES = IMAGE_MODELS.map(([name]) => name) as ImageModelAlias[]
export const DEFAULT_IMAGE_MODEL: ImageModelAlias = 'flux-schnell'

/** OpenAI's own model names, accepted as the aliases they are (so a client written for OpenAI works unchanged). */
const SYNONYMS: Record<string, ImageModelAlias> = { 'dall-e-2': 'dalle-2', 'dall-e-3': 'dalle-3', 'gpt-image-1': 'gpt-image' }

/** An alias (or OpenAI's name for one) in any letter case, else null. */
export function imageModelAlias(name: string): ImageModelAlias | null {
  const key = name.trim().toLowerCase()
  return (IMAGE_MODEL_ALIASES as string[]).includes(key) ? (key as ImageModelAlias) : (lookup(SYNONYMS, key) ?? null)
}

export const PROMPT_MAX = 4000
export const MIN_SIDE = 64
export const MAX_SIDE = 2048

const prompt = z
  .string({ error: 'prompt is required' })
  .trim()
  .min(1, 'prompt is required')
  .max(PROMPT_MAX, `prompt is longer than ${PROMPT_MAX} characters`)

const model = z
  .string({ error: 'model must be a string' })
  .transform((name, context) => {
    const alias = imageModelAlias(name)
    if (!alias) context.addIssue({ code: 'custom', message: `model must be one of: ${IMAGE_MODEL_ALIASES.join(', ')}` })
    return alias ?? z.NEVER
  })

/** `WxH` (`1024x1024`), each side from 64 to 2048; OpenAI's `auto` leaves the size to the provider. */
const size = z
  .string({ error: 'size must be a string' })
  .trim()
  .transform((text, context) => {
    if (text.toLowerCase() === 'auto') return undefined
    const match = /^(\d{2,4})\s*[x×*]\s*(\d{2,4})$/i.exec(text)
    const [width, height] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN]
    if (!(width >= MIN_SIDE && width <= MAX_SIDE && height >= MIN_SIDE && height <= MAX_SIDE)) {
      context.addIssue({ code: 'custom', message: `size must be WxH (such as 1024x1024), each side from ${MIN_SIDE} to ${MAX_SIDE}` })
      return z.NEVER
    }
    return { width, height }
  })

/** `GET /api/imagine?prompt=&model=&size=`. */
export const imagineInput = z.object({
  prompt: prompt.describe('what to draw'),
  model: model.default(DEFAULT_IMAGE_MODEL).describe(`one of ${IMAGE_MODEL_ALIASES.join(', ')} (default ${DEFAULT_IMAGE_MODEL})`),
  size: size.optional().describe('WxH such as 1024x1024 (default: the provider’s)'),
})
export type ImagineInput = z.output<typeof imagineInput>

/** `POST /api/v1/images/generations`: OpenAI's request body (`quality`, `style`, `user` and other fields are accepted and not used). */
export const imageGenerationsInput = z.object({
  prompt,
  model: model.default(DEFAULT_IMAGE_MODEL),
  n: z.number({ error: 'n must be a number' }).int('n must be a whole number').min(1, 'n must be from 1 to 4').max(4, 'n must be from 1 to 4').default(1),
  size: size.nullish().transform((value) => value ?? undefined),
  response_format: z.enum(['url', 'b64_json'], { error: 'response_format must be url or b64_json' }).nullish().transform((value) => value ?? 'url'),
  negative_prompt: z.string().max(PROMPT_MAX).optional(),
})
export type ImageGenerationsInput = z.output<typeof imageGenerationsInput>

const imageUrl = z
  .string({ error: 'url is required' })
  .trim()
  .min(1, 'url is required')
  .max(2048, 'url is longer than 2048 characters')
  .describe('the image: an http(s) URL or an uploads/... path of this server')

/** `GET /api/toanime?url=`, `/api/zombie?url=`, `/api/removebg?url=`. */
export const imageSourceInput = z.object({ url: imageUrl })

/** The JSON answer of `/api/imagine` with `Accept: application/json`. */
export interface ImagineAnswer {
  message: string
  url: string
  path: string
  width: number
  height: number
  model: ImageModelAlias
}
