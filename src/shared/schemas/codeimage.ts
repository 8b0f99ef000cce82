import { z } from 'zod'

/** ray.so's gradient themes (decisions §5, Appendix), in ray.so's order; `candy` is its default. */
export const CODE_IMAGE_THEMES = [
  'candy',
  'crimson',
  'falcon',
  'meadow',
  'midnight',
  'raindrop',
  'sunset',
  'breeze',
  'ice',
  'sand',
  'forest',
  'mono',
  'noir',
  'bitmap',
  'wrapped',
] as const
export type CodeImageTheme = (typeof CODE_IMAGE_THEMES)[number]

/** ray.so's padding choices; other whole numbers from 0 to 256 are accepted too. */
export const CODE_IMAGE_PADDINGS = [16, 32, 64, 128] as const
export const MAX_PADDING = 256

/** Limits of one snippet (past them: 413). */
export const MAX_SNIPPET_BYTES = 100 * 1024
export const MAX_SNIPPET_LINES = 2000

const bool = (name: string) =>
  z.preprocess(
    (v) => (v === 'true' ? true : v === 'false' ? false : v),
    z.boolean({ error: `${name} must be true or false` }),
  )

const number = (name: string, min: number, max: number, what = 'a whole number') =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be ${what}`)
    .min(min, `${name} must be from ${min} to ${max}`)
    .max(max, `${name} must be from ${min} to ${max}`)

/**
 * The request of `POST /api/codeimage` (utility-api.md): every field optional except that the
 * snippet must not be empty. The first seven fields are the spec's; the rest go beyond ray.so.
 */
export const codeImageInput = z.object({
  codeSnippet: z.string({ error: 'codeSnippet must be a string' }).optional().default(''),
  darkMode: bool('darkMode').default(true),
  background: bool('background').default(true),
  theme: z
    .string({ error: 'theme must be a string' })
    .trim()
    .toLowerCase()
    .default('candy')
    .refine((t): t is CodeImageTheme => (CODE_IMAGE_THEMES as readonly string[]).includes(t), {
      error: (issue) => `Unknown theme "${String(issue.input)}"; valid themes: ${CODE_IMAGE_THEMES.join(', ')}`,
    }),
  padding: number('padding', 0, MAX_PADDING).default(64),
  /** A shiki language name or alias; omitted, empty or `auto` means detect it from the snippet. */
  language: z.string({ error: 'language must be a string' }).trim().max(64, 'language is too long').optional(),
  title: z.string({ error: 'title must be a string' }).max(200, 'title must be at most 200 characters').optional().default(''),
  lineNumbers: bool('lineNumbers').default(false),
  /** Lines to highlight, 1-based: `"3-5,9"`, or an array of line numbers. */
  highlightLines: z
    .union([z.string({ error: 'highlightLines must be a string like "3-5,9"' }).max(1000), z.array(z.number().int())])
    .optional(),
  fontSize: number('fontSize', 8, 64).default(15),
  /** Widest the image may be, in CSS pixels (before `scale`); longer lines wrap. */
  maxWidth: number('maxWidth', 200, 4000).optional(),
  scale: number('scale', 1, 4).default(2),
  format: z.enum(['png', 'svg'], { error: 'format must be png or svg' }).default('png'),
})

export type CodeImageInput = z.input<typeof codeImageInput>
export type CodeImageOptions = z.output<typeof codeImageInput>

/** The JSON answer of `/api/codeimage` with `Accept: application/json` (decisions §5): top level, no envelope. */
export interface CodeImageStored {
  message: string
  url: string
  path: string
  width: number
  height: number
}
