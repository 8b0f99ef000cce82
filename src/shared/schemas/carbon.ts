/**
 * The request of `POST /api/carbon` (decisions §6, docs/carbon.md): carbon.now.sh's own option
 * names and value formats (`paddingVertical: "56px"`, `exportSize: "2x"`, `lineHeight: "133%"`,
 * `backgroundColor: "rgba(171, 184, 195, 1)"`), with carbon's defaults. Fields carbon has and
 * Plaza does not draw are accepted and ignored (docs/carbon.md says which and why); fields
 * carbon does not have are ignored too, so a carbon configuration can be sent as it is.
 */
import { z } from 'zod'
import { lookup } from '../lookup.js'

/** carbon's themes (its ids), in carbon's order; `seti` is its default. */
export const CARBON_THEMES = [
  '3024-night',
  'a11y-dark',
  'blackboard',
  'base16-dark',
  'base16-light',
  'cobalt',
  'dracula',
  'duotone-dark',
  'hopscotch',
  'lucario',
  'material',
  'monokai',
  'night-owl',
  'nord',
  'oceanic-next',
  'one-light',
  'one-dark',
  'panda-syntax',
  'paraiso-dark',
  'seti',
  'shades-of-purple',
  'solarized dark',
  'solarized light',
  'synthwave-84',
  'twilight',
  'verminal',
  'vscode',
  'yeti',
  'zenburn',
] as const
export type CarbonTheme = (typeof CARBON_THEMES)[number]

/** Other spellings people use for carbon's themes (its display names, dashes for spaces). */
export const CARBON_THEME_ALIASES: Record<string, CarbonTheme> = {
  'solarized-dark': 'solarized dark',
  'solarized-light': 'solarized light',
  panda: 'panda-syntax',
  duotone: 'duotone-dark',
  paraiso: 'paraiso-dark',
  'synthwave-84': 'synthwave-84',
  synthwave: 'synthwave-84',
  '3024': '3024-night',
  'one-dark-pro': 'one-dark',
}

/**
 * carbon's window themes: `none` (its default: macOS controls, rounded corners), `sharp` (square
 * corners), `bw` (outlined grey controls, a white border) and `boxy` (minimise, maximise, close on the right).
 */
export const CARBON_WINDOW_THEMES = ['none', 'sharp', 'bw', 'boxy'] as const
export type CarbonWindowTheme = (typeof CARBON_WINDOW_THEMES)[number]

export const CARBON_EXPORT_SIZES = ['1x', '2x', '4x'] as const

/**
 * Font families: the ones Plaza ships (the code images' bundled fonts) are drawn as asked; `Hack`
 * (carbon's default) is drawn with DejaVu Sans Mono, which Hack is built from (same metrics,
 * near-identical shapes); carbon's other fonts are not shipped and fall back to JetBrains Mono
 * (the answer's `x-font-family` header says so).
 */
export const CARBON_SHIPPED_FONTS = ['Hack', 'JetBrains Mono', 'DejaVu Sans Mono', 'Cascadia Code', 'Fira Code', 'IBM Plex Mono', 'Source Code Pro'] as const
export const CARBON_FALLBACK_FONTS = [
  'Anonymous Pro',
  'Droid Sans Mono',
  'Fantasque Sans Mono',
  'Inconsolata',
  'Monoid',
  'Space Mono',
  'Ubuntu Mono',
] as const
export const CARBON_FONTS = [...CARBON_SHIPPED_FONTS, ...CARBON_FALLBACK_FONTS]

export const MAX_CARBON_PADDING = 256

const bool = (name: string) =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean({ error: `${name} must be true or false` }))

/** carbon writes lengths as `"56px"`; a bare number means pixels too. Whole or decimal, within [min, max]. */
const px = (name: string, min: number, max: number) =>
  z
    .union([z.number(), z.string()], { error: `${name} must be a length like "56px"` })
    .transform((value, ctx) => {
      const match = typeof value === 'number' ? [String(value), String(value)] : /^\s*(\d+(?:\.\d+)?)\s*(?:px)?\s*$/i.exec(value)
      const n = match ? Number(match[1]) : NaN
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a length from ${min}px to ${max}px, like "${Math.min(max, Math.max(min, 56))}px"` })
        return z.NEVER
      }
      // Whole CSS pixels, so every edge falls on a device pixel.
      return Math.round(n)
    })

const int = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be from ${min} to ${max}`)
    .max(max, `${name} must be from ${min} to ${max}`)

export const carbonInput = z.object({
  code: z.string({ error: 'code must be a string' }).optional().default(''),
  /** A shiki language name or alias, or one of carbon's CodeMirror modes; omitted or `auto`: detect it. */
  language: z.string({ error: 'language must be a string' }).trim().max(64, 'language is too long').optional(),
  theme: z
    .string({ error: 'theme must be a string' })
    .trim()
    .toLowerCase()
    .default('seti')
    .transform((t) => lookup(CARBON_THEME_ALIASES, t) ?? t)
    .refine((t): t is CarbonTheme => (CARBON_THEMES as readonly string[]).includes(t), {
      error: (issue) => `Unknown theme "${String(issue.input)}"; valid themes: ${CARBON_THEMES.join(', ')}`,
    })
    .describe(`one of carbon's themes: ${CARBON_THEMES.join(', ')}`),
  /** A CSS colour: `#rgb`, `#rrggbb`, `#rrggbbaa`, `rgb()`, `rgba()`, `transparent`, `white`, `black`. */
  backgroundColor: z
    .string({ error: 'backgroundColor must be a CSS colour string' })
    .trim()
    .max(64, 'backgroundColor is too long')
    .default('rgba(171, 184, 195, 1)')
    .describe('a CSS colour: #rrggbb, #rrggbbaa, rgb(), rgba() or transparent'),
  /** carbon's `backgroundMode`: only `color` is drawn (an image background is refused). */
  backgroundMode: z.enum(['color', 'image'], { error: 'backgroundMode must be color' }).default('color'),
  windowTheme: z
    .string({ error: 'windowTheme must be a string' })
    .trim()
    .toLowerCase()
    .default('none')
    .refine((t): t is CarbonWindowTheme => (CARBON_WINDOW_THEMES as readonly string[]).includes(t), {
      error: (issue) => `Unknown windowTheme "${String(issue.input)}"; use ${CARBON_WINDOW_THEMES.join(', ')}`,
    })
    .describe('none (macOS controls, rounded corners), sharp (square corners), bw (grey outlined controls, white border), boxy'),
  windowControls: bool('windowControls').default(true),
  paddingVertical: px('paddingVertical', 0, MAX_CARBON_PADDING).default(56).describe('a length like "56px" (or a number of px), 0-256'),
  paddingHorizontal: px('paddingHorizontal', 0, MAX_CARBON_PADDING).default(56).describe('a length like "56px" (or a number of px), 0-256'),
  dropShadow: bool('dropShadow').default(true),
  dropShadowOffsetY: px('dropShadowOffsetY', 0, 100).default(20).describe('a length like "20px", 0-100'),
  dropShadowBlurRadius: px('dropShadowBlurRadius', 0, 200).default(68).describe('a length like "68px", 0-200'),
  lineNumbers: bool('lineNumbers').default(false),
  firstLineNumber: int('firstLineNumber', 0, 1_000_000).default(1),
  fontFamily: z
    .string({ error: 'fontFamily must be a string' })
    .trim()
    .default('Hack')
    .transform((f) => CARBON_FONTS.find((known) => known.toLowerCase() === f.toLowerCase()) ?? f)
    .refine((f) => (CARBON_FONTS as readonly string[]).includes(f), {
      error: (issue) => `Unknown fontFamily "${String(issue.input)}"; drawn as asked: ${CARBON_SHIPPED_FONTS.join(', ')}; drawn with JetBrains Mono: ${CARBON_FALLBACK_FONTS.join(', ')}`,
    })
    .describe(`${CARBON_SHIPPED_FONTS.join(', ')} (Hack is drawn with DejaVu Sans Mono), or one of carbon's other fonts, drawn with JetBrains Mono`),
  fontSize: px('fontSize', 8, 64).default(14).describe('a length like "14px", 8-64'),
  /** carbon writes `"133%"`; a bare number is a percentage too. */
  lineHeight: z
    .union([z.number(), z.string()], { error: 'lineHeight must be a percentage like "133%"' })
    .transform((value, ctx) => {
      const match = typeof value === 'number' ? [String(value), String(value)] : /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(value)
      const n = match ? Number(match[1]) : NaN
      if (!Number.isFinite(n) || n < 90 || n > 300) {
        ctx.addIssue({ code: 'custom', message: 'lineHeight must be a percentage from 90% to 300%, like "133%"' })
        return z.NEVER
      }
      return n
    })
    .default(133)
    .describe('a percentage like "133%", 90-300'),
  exportSize: z
    .union([z.string(), z.number()], { error: 'exportSize must be 1x, 2x or 4x' })
    .transform((v) => String(v).trim().toLowerCase().replace(/^(\d)$/, '$1x'))
    .refine((v): v is (typeof CARBON_EXPORT_SIZES)[number] => (CARBON_EXPORT_SIZES as readonly string[]).includes(v), { error: 'exportSize must be 1x, 2x or 4x' })
    .default('2x')
    .describe('1x, 2x or 4x'),
  /** true (carbon's default): the window fits the code, 90 to 1024 px wide in all; false: the image is `width` px wide and long lines wrap. */
  widthAdjustment: bool('widthAdjustment').default(true),
  width: px('width', 200, 4000).default(680).describe('the image width in px when widthAdjustment is false, 200-4000'),
  /** Makes the image square, padding the shorter side. */
  squaredImage: bool('squaredImage').default(false),
  /** The title in the window's bar (carbon's title bar). */
  titleBar: z.string({ error: 'titleBar must be a string' }).max(200, 'titleBar must be at most 200 characters').optional().default(''),
  /** carbon's own logo: accepted and ignored (Plaza draws no carbon mark). */
  watermark: bool('watermark').optional(),
})

export type CarbonInput = z.input<typeof carbonInput>
export type CarbonOptions = z.output<typeof carbonInput>

/** The JSON answer of `/api/carbon` with `Accept: application/json`: top level, no envelope. */
export interface CarbonStored {
  message: string
  url: string
  path: string
  width: number
  height: number
}
