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

/** The bundled code fonts (open licences, see the README's credits); JetBrains Mono is ray.so's default. */
export const CODE_FONTS = ['jetbrains-mono', 'fira-code', 'source-code-pro', 'ibm-plex-mono', 'cascadia-code'] as const
export type CodeFont = (typeof CODE_FONTS)[number]

/** Highest `scale` (ray.so exports up to 6x); the pixel budget (scene.ts MAX_PIXELS) still bounds the area. */
export const MAX_SCALE = 6
/** Widest image by default, in CSS pixels: 120 columns at the default font size with line numbers. Longer lines wrap. */
export const DEFAULT_MAX_WIDTH = 1320

/** `#rgb` or `#rrggbb`. */
const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i

/**
 * Reads a `backgroundColor`: one colour (`#rrggbb`), or two for a gradient (`#a,#b` or
 * `linear-gradient(#a, #b)`), drawn at ray.so's 140 degrees. Null when it cannot be read.
 */
export function parseBackgroundColor(value: string): { from: string; to: string } | null {
  const inner = /^linear-gradient\((.*)\)$/i.exec(value.trim())?.[1] ?? value
  const colors = inner.split(',').map((c) => c.trim().toLowerCase())
  if (colors.length < 1 || colors.length > 2 || !colors.every((c) => HEX.test(c))) return null
  const full = colors.map((c) => (c.length === 4 ? '#' + [...c.slice(1)].map((d) => d + d).join('') : c))
  return { from: full[0], to: full[full.length - 1] }
}

/**
 * Limits of one snippet (past them: 413), which bound one request's CPU (issue #44: a render's cost
 * grows with the code's size; docs/codeimage.md gives the measured figures).
 */
export const MAX_SNIPPET_BYTES = 32 * 1024
export const MAX_SNIPPET_LINES = 1000

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
  /** Widest the image may be, in CSS pixels (before `scale`); longer lines wrap. 0: no limit. Default DEFAULT_MAX_WIDTH. */
  maxWidth: number('maxWidth', 0, 4000)
    .refine((n) => n === 0 || n >= 200, 'maxWidth must be 0 (no limit) or from 200 to 4000')
    .optional(),
  /** false: long lines never wrap and the image is as wide as the longest (maxWidth is then refused). */
  wrap: bool('wrap').default(true),
  scale: number('scale', 1, MAX_SCALE).default(2),
  /** The code font, one of CODE_FONTS (names as `Fira Code` or `fira-code`). */
  fontFamily: z
    .string({ error: 'fontFamily must be a string' })
    .trim()
    .toLowerCase()
    .transform((f) => f.replace(/[\s_]+/g, '-'))
    .default('jetbrains-mono')
    .refine((f): f is CodeFont => (CODE_FONTS as readonly string[]).includes(f), {
      error: (issue) => `Unknown fontFamily "${String(issue.input)}"; bundled fonts: ${CODE_FONTS.join(', ')}`,
    }),
  /** The background instead of the theme's gradient: `#rrggbb`, or `#a,#b` / `linear-gradient(#a, #b)` for a gradient. */
  backgroundColor: z
    .string({ error: 'backgroundColor must be a string' })
    .max(100, 'backgroundColor is too long')
    .refine((v) => parseBackgroundColor(v) !== null, {
      error: (issue) => `backgroundColor: cannot read "${String(issue.input)}"; use #rrggbb, or two colours for a gradient: #rrggbb,#rrggbb`,
    })
    .optional(),
  /** A picture behind the window: the `uploads/...` path of an image stored on this server (cropped to cover). */
  backgroundImage: z.string({ error: 'backgroundImage must be a string' }).trim().max(300, 'backgroundImage is too long').optional(),
  /** false: no red, yellow and green dots in the title bar. */
  windowControls: bool('windowControls').default(true),
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
