/** `GET /api/logo` (docs/maker.md): a text logo in one of several styles. */
import { z } from 'zod'
import { colourParam } from './colour.js'

export const LOGO_STYLES = [
  ['gradient', 'Bold letters filled with a diagonal gradient of the colour'],
  ['outline', 'Hollow letters: a thick outline of the colour'],
  ['neon', 'Glowing tube letters on a dark wall'],
  ['badge', 'Letters on a rounded badge of the colour'],
  ['monogram', 'Initials (up to three) in a ring, serif'],
  ['stacked', 'One word a line, each line stretched to the same width'],
  ['retro', 'Letters with a stepped 3D shadow'],
] as const

export type LogoStyle = (typeof LOGO_STYLES)[number][0]
export const LOGO_STYLE_NAMES = LOGO_STYLES.map(([name]) => name) as LogoStyle[]
export const LOGO_TEXT_MAX = 40
export const LOGO_SIZE_MIN = 64
export const LOGO_SIZE_MAX = 1024

/** `GET /api/logo?text=&style=&color=&background=&size=`. */
export const logoInput = z.object({
  text: z
    .string({ error: 'text is required' })
    .transform((t) => t.trim().replace(/\s+/g, ' '))
    .refine((t) => t.length > 0, 'text is required')
    .refine((t) => [...t].length <= LOGO_TEXT_MAX, `text is longer than ${LOGO_TEXT_MAX} characters`)
    .describe(`the logo's text, at most ${LOGO_TEXT_MAX} characters`),
  style: z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .refine((s): s is LogoStyle => (LOGO_STYLE_NAMES as string[]).includes(s), `style must be one of: ${LOGO_STYLE_NAMES.join(', ')}`)
    .default('gradient')
    .describe(`the style: ${LOGO_STYLE_NAMES.join(', ')}`),
  color: colourParam('color').optional().describe('the main colour: #rgb, #rrggbb or a CSS name (default per style)'),
  background: colourParam('background', true).optional().describe('the background: a colour or transparent (default per style)'),
  size: z
    .string()
    .trim()
    .regex(/^\d+$/, 'size must be a whole number')
    .transform(Number)
    .refine((n) => n >= LOGO_SIZE_MIN && n <= LOGO_SIZE_MAX, `size must be from ${LOGO_SIZE_MIN} to ${LOGO_SIZE_MAX} (the image's height in pixels)`)
    .default(256)
    .describe(`the image's height in pixels, ${LOGO_SIZE_MIN} to ${LOGO_SIZE_MAX} (default 256); the width follows the text`),
})
export type LogoInput = z.output<typeof logoInput>
