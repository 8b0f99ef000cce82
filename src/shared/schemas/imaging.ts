/**
 * The image operations of the catalog (decisions §6, docs/imaging.md): photo effects, expand to a
 * ratio, upscale. Their query schemas and the numbered effect list, shared by the server and the CLI.
 */
import { z } from 'zod'

/** The effects, numbered from 1 in this order (`effectIndex`); the order is part of the API: add at the end only. */
export const IMAGE_EFFECTS = [
  ['grayscale', 'Shades of grey (r = g = b)'],
  ['sepia', 'Warm brown old-photo tones'],
  ['invert', 'Colour negative'],
  ['blur', 'Gaussian blur (sigma: the short side / 50, at least 2)'],
  ['sharpen', 'Crisper edges (unsharp mask)'],
  ['emboss', 'Grey relief, lit from the top left'],
  ['edge', 'Edge detection: bright outlines on black'],
  ['pixelate', 'Large square blocks (64 across the long side)'],
  ['posterize', 'Four levels per channel'],
  ['threshold', 'Black and white at mid grey'],
  ['duotone', 'Two colours: navy shadows, cyan highlights'],
  ['duotone-sunset', 'Two colours: purple shadows, orange highlights'],
  ['duotone-mint', 'Two colours: forest shadows, mint highlights'],
  ['vignette', 'Edges darkened towards the corners'],
  ['tint', 'Warm orange tint, brightness kept'],
  ['brighten', '30% brighter'],
  ['darken', '30% darker'],
  ['saturate', 'Stronger colours (x1.8)'],
  ['desaturate', 'Muted colours (x0.4)'],
  ['contrast', 'Higher contrast around mid grey (x1.5)'],
  ['flip', 'Upside down (mirrored top to bottom)'],
  ['mirror', 'Mirrored left to right'],
  ['rotate', 'Turned 90° clockwise'],
  ['solarize', 'Tones above mid grey inverted'],
  ['hue-rotate', 'Hues turned 180° round the colour wheel'],
  ['warm', 'Warmer white balance'],
  ['cool', 'Cooler white balance'],
  ['normalize', 'Levels stretched to the full range'],
  ['sketch', 'Pencil sketch: dark outlines on white'],
  ['vintage', 'Sepia, softened contrast and a vignette'],
] as const satisfies ReadonlyArray<readonly [string, string]>

export type ImageEffectName = (typeof IMAGE_EFFECTS)[number][0]
export const IMAGE_EFFECT_NAMES = IMAGE_EFFECTS.map(([name]) => name) as ImageEffectName[]

/** The longest side of any image these operations produce. */
export const MAX_OUTPUT_SIDE = 8192
/** A URL, or an `uploads/...` path of this server. */
const MAX_SOURCE_LENGTH = 2048

const source = (field: string) =>
  z.string({ error: `${field} must be a string` }).trim().min(1, `${field} is required`).max(MAX_SOURCE_LENGTH, `${field} is longer than ${MAX_SOURCE_LENGTH} characters`)

const effectIndex = z
  .string()
  .regex(/^\d+$/, 'effectIndex must be a whole number')
  .transform(Number)
  .refine((n) => n >= 1 && n <= IMAGE_EFFECTS.length, `effectIndex must be from 1 to ${IMAGE_EFFECTS.length} (GET /api/imageFx/effects lists them)`)
  .optional()
  .describe(`the effect by number, 1 to ${IMAGE_EFFECTS.length}`)
const effect = z
  .string()
  .transform((name) => name.trim().toLowerCase())
  .refine((name): name is ImageEffectName => (IMAGE_EFFECT_NAMES as string[]).includes(name), `effect must be one of: ${IMAGE_EFFECT_NAMES.join(', ')}`)
  .optional()
  .describe('the effect by name')

const effectOf = (input: { effectIndex?: number; effect?: ImageEffectName }) => (input.effect ?? IMAGE_EFFECT_NAMES[input.effectIndex! - 1]) as ImageEffectName
const requireEffect = (input: { effectIndex?: number; effect?: string }, context: z.RefinementCtx) => {
  if (input.effectIndex === undefined && input.effect === undefined) context.addIssue({ code: 'custom', path: ['effectIndex'], message: 'effectIndex (or effect) is required' })
}

/** `GET /api/imageFx?imageUrl=&effectIndex=` (or `url=`, `effect=`). */
export const imageFxInput = z
  .object({
    imageUrl: source('imageUrl').optional().describe('the image: an http(s) URL or an uploads/... path of this server'),
    url: source('url').optional().describe('the same as imageUrl'),
    effectIndex,
    effect,
  })
  .superRefine((input, context) => {
    if (!input.imageUrl && !input.url) context.addIssue({ code: 'custom', path: ['imageUrl'], message: 'imageUrl (or url) is required' })
    requireEffect(input, context)
  })
  .transform((input) => ({ source: (input.imageUrl ?? input.url)!, field: input.imageUrl ? 'imageUrl' : 'url', effect: effectOf(input) }))

/** `POST /api/imageFx?effectIndex=` (or `effect=`) with the image as the multipart field `file`. */
export const imageFxFormInput = z
  .object({ effectIndex, effect })
  .superRefine(requireEffect)
  .transform((input) => ({ effect: effectOf(input) }))

/** `W:H` with whole or decimal sides, or one number; from 1:10 to 10:1. */
const ratio = z
  .string({ error: 'ratio is required' })
  .trim()
  .transform((text, context) => {
    const match = /^(\d+(?:\.\d+)?)(?:\s*[:x/]\s*(\d+(?:\.\d+)?))?$/.exec(text)
    const value = match ? Number(match[1]) / (match[2] === undefined ? 1 : Number(match[2])) : NaN
    if (!Number.isFinite(value) || value < 0.1 || value > 10) {
      context.addIssue({ code: 'custom', message: 'ratio must be W:H (such as 16:9) or a number, from 1:10 to 10:1' })
      return z.NEVER
    }
    return value
  })

const url = source('url').describe('the image: an http(s) URL or an uploads/... path of this server')

/** `POST /api/diffuser/expand?ratio=` with the image as the multipart field `file`. */
export const expandFormInput = z.object({ ratio: ratio.describe('the ratio of the result: W:H such as 16:9, or a number such as 1.5') })
/** `GET /api/diffuser/expand?url=&ratio=`. */
export const expandInput = expandFormInput.extend({ url })

/** `POST /api/upscale?scale=` with the image as the multipart field `file`. */
export const upscaleFormInput = z.object({
  scale: z
    .enum(['2', '4'], { error: 'scale must be 2 or 4' })
    .default('2')
    .transform(Number)
    .describe('2 (default) or 4'),
})
/** `GET /api/upscale?url=&scale=2|4`. */
export const upscaleInput = upscaleFormInput.extend({ url })

/** The JSON answer of every image operation with `Accept: application/json`. */
/** `POST /api/files`: the image is the multipart `file`; the query takes nothing. */
export const storeFileInput = z.object({})

export const storedImageAnswer = z.object({ message: z.string(), url: z.string(), path: z.string(), width: z.number().int(), height: z.number().int() })
export type StoredImageAnswer = z.infer<typeof storedImageAnswer>
