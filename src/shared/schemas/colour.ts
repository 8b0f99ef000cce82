/** Colours as the Maker operations take them: `#rgb`, `#rrggbb` or a CSS colour name, case-insensitive. */
import { z } from 'zod'
import { CSS_COLORS } from '../css-colors.js'
import { lookup } from '../lookup.js'

/** `#rrggbb` for a valid colour, null otherwise. */
export function parseColour(text: string): string | null {
  const value = text.trim().toLowerCase()
  if (/^#?[0-9a-f]{6}$/.test(value)) return `#${value.replace('#', '')}`
  if (/^#?[0-9a-f]{3}$/.test(value)) return `#${[...value.replace('#', '')].map((c) => c + c).join('')}`
  return lookup(CSS_COLORS, value) ?? null
}

/** A colour query parameter, answered as `#rrggbb`; `transparent` too when `allowTransparent`. */
export const colourParam = (field: string, allowTransparent = false) =>
  z
    .string({ error: `${field} must be a string` })
    .max(32, `${field} must be a colour: #rgb, #rrggbb or a CSS name such as tomato`)
    .transform((text, context) => {
      if (allowTransparent && text.trim().toLowerCase() === 'transparent') return 'transparent'
      const colour = parseColour(text)
      if (!colour) {
        context.addIssue({ code: 'custom', message: `${field} must be a colour: #rgb, #rrggbb or a CSS name such as tomato${allowTransparent ? ', or transparent' : ''} (got ${JSON.stringify(text.slice(0, 32))})` })
        return z.NEVER
      }
      return colour
    })
