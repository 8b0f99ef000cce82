/**
 * `GET /api/logo`: the text as a logo in one of seven styles, drawn as SVG (the letters are
 * paths, so the effects are plain SVG paint: gradients, strokes, a blur filter) and rasterised.
 * `size` is the height; the width follows the text, at most LOGO_MAX_WIDTH.
 */
import type { LogoInput, LogoStyle } from '../../../../shared/schemas/logo.js'
import { mix, readableOn, rotateHue } from '../../../render/colour.js'
import { drawLines, fontSet, layoutLine, type FontSet, type Line } from '../../../render/text.js'
import type { Scene } from '../meme/render.js'

export interface LogoJob {
  kind: 'logo'
  input: LogoInput
}

export const LOGO_MAX_WIDTH = 4096

/** Each style's colour and background when the request gives none. */
export const LOGO_DEFAULTS: Record<LogoStyle, { color: string; background: string; font: Parameters<typeof fontSet>[0] }> = {
  gradient: { color: '#7c3aed', background: '#ffffff', font: 'sans-bold' },
  outline: { color: '#111827', background: '#ffffff', font: 'sans-bold' },
  neon: { color: '#ff2bd6', background: '#0b0620', font: 'sans-bold' },
  badge: { color: '#2563eb', background: 'transparent', font: 'sans-bold' },
  monogram: { color: '#0f766e', background: '#ffffff', font: 'serif-bold' },
  stacked: { color: '#ea580c', background: '#fff7ed', font: 'impact' },
  retro: { color: '#e63946', background: '#fdf0d5', font: 'impact' },
}

const svgDocument = (width: number, height: number, background: string, body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${background === 'transparent' ? '' : `<rect width="${width}" height="${height}" fill="${background}"/>`}${body}</svg>`

/** One line of text centred in a canvas `height` high: the font size and the canvas width. */
function oneLine(set: FontSet, line: Line, height: number, share: number, padding: number) {
  let size = height * share
  let width = Math.ceil(line.width * size + 2 * padding * height)
  if (width > LOGO_MAX_WIDTH) {
    size *= (LOGO_MAX_WIDTH - 2 * padding * height) / (line.width * size)
    width = LOGO_MAX_WIDTH
  }
  const { ascent, descent } = set.metrics
  // The block drawLines centres is ascent-to-descent; caps sit a little above its middle.
  const top = height / 2 - ((ascent - descent) * size) / 2 + size * 0.05
  return { size, width, top }
}

const initialsOf = (text: string) =>
  text
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 3)
    .map((w) => [...w][0])
    .join('')
    .toLocaleUpperCase('en')

export function logoScene({ input }: LogoJob): Scene {
  const defaults = LOGO_DEFAULTS[input.style]
  const color = input.color ?? defaults.color
  const background = input.background ?? defaults.background
  const set = fontSet(defaults.font)
  const H = input.size
  const line = layoutLine(set, input.text)
  const draw = (lines: Line[], x: number, y: number, size: number, attributes: string, noEmoji = false) =>
    drawLines(set, lines, { x, y, size, lineHeight: 1, align: 'middle', attributes, noEmoji })

  switch (input.style) {
    case 'gradient': {
      const { size, width, top } = oneLine(set, line, H, 0.55, 0.12)
      const body = `<defs><linearGradient id="plaza-logo-fill" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${color}"/><stop offset="1" stop-color="${rotateHue(color, 55)}"/></linearGradient></defs>${draw([line], width / 2, top, size, 'fill="url(#plaza-logo-fill)"')}`
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
    case 'outline': {
      const { size, width, top } = oneLine(set, line, H, 0.55, 0.12)
      const fill = background === 'transparent' ? 'none' : background
      return { svg: svgDocument(width, H, background, draw([line], width / 2, top, size, `fill="${fill}" stroke="${color}" stroke-width="${(size * 0.05).toFixed(1)}" stroke-linejoin="round"`)), width, height: H }
    }
    case 'neon': {
      const { size, width, top } = oneLine(set, line, H, 0.5, 0.18)
      const glow = (size * 0.12).toFixed(1)
      const tube = `fill="none" stroke="${color}" stroke-width="${(size * 0.06).toFixed(1)}" stroke-linejoin="round" stroke-linecap="round"`
      const body =
        `<defs><filter id="plaza-logo-glow" x="-30%" y="-60%" width="160%" height="220%"><feGaussianBlur stdDeviation="${glow}"/></filter></defs>` +
        `<g filter="url(#plaza-logo-glow)">${draw([line], width / 2, top, size, tube, true)}</g>` +
        draw([line], width / 2, top, size, tube, true) +
        draw([line], width / 2, top, size, `fill="none" stroke="${mix(color, '#ffffff', 0.75)}" stroke-width="${(size * 0.018).toFixed(1)}" stroke-linejoin="round"`)
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
    case 'badge': {
      const { size, width, top } = oneLine(set, line, H, 0.42, 0.22)
      const inset = H * 0.08
      const body =
        `<rect x="${inset}" y="${inset}" width="${width - 2 * inset}" height="${H - 2 * inset}" rx="${(H - 2 * inset) / 2}" fill="${color}"/>` +
        `<rect x="${inset * 1.6}" y="${inset * 1.6}" width="${width - 3.2 * inset}" height="${H - 3.2 * inset}" rx="${(H - 3.2 * inset) / 2}" fill="none" stroke="${readableOn(color)}" stroke-opacity="0.6" stroke-width="${(H * 0.015).toFixed(1)}"/>` +
        draw([line], width / 2, top, size, `fill="${readableOn(color)}"`)
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
    case 'monogram': {
      const letters = layoutLine(set, initialsOf(input.text))
      const width = H
      const size = Math.min(H * 0.42, (H * 0.62) / Math.max(letters.width, 0.1))
      const { ascent, descent } = set.metrics
      const top = H / 2 - ((ascent - descent) * size) / 2 + size * 0.04
      const body =
        `<circle cx="${H / 2}" cy="${H / 2}" r="${H * 0.44}" fill="none" stroke="${color}" stroke-width="${(H * 0.035).toFixed(1)}"/>` +
        `<circle cx="${H / 2}" cy="${H / 2}" r="${H * 0.385}" fill="none" stroke="${color}" stroke-width="${(H * 0.01).toFixed(1)}"/>` +
        draw([letters], H / 2, top, size, `fill="${color}"`)
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
    case 'stacked': {
      const words = input.text.split(' ').map((word) => layoutLine(set, word))
      // Each word scaled to the same width; then the stack scaled to fit the height.
      const column = 1
      const sizes = words.map((w) => column / Math.max(w.width, 0.1))
      const gap = 0.06
      const { ascent } = set.metrics
      const capHeight = 0.73
      const total = sizes.reduce((sum, s) => sum + s * capHeight, 0) + gap * (words.length - 1)
      const scale = Math.min((H * 0.8) / total, LOGO_MAX_WIDTH * 0.8)
      const width = Math.min(LOGO_MAX_WIDTH, Math.max(Math.round(column * scale + H * 0.2), Math.round(H * 0.6)))
      let y = (H - total * scale) / 2
      let body = ''
      words.forEach((word, i) => {
        const size = sizes[i] * scale
        const fill = i % 2 === 0 ? color : mix(color, '#000000', 0.45)
        // drawLines puts the baseline at top + ascent×size (line height 1 minus the font box): place the caps' top at y.
        body += drawLines(set, [word], { x: width / 2, y: y - (ascent - capHeight) * size, size, lineHeight: 1, align: 'middle', attributes: `fill="${fill}"` })
        y += size * capHeight + gap * scale
      })
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
    case 'retro': {
      const { size, width, top } = oneLine(set, line, H, 0.5, 0.16)
      const shade = mix(color, '#000000', 0.55)
      const depth = Math.max(2, Math.round(size * 0.08))
      let body = ''
      for (let i = depth; i > 0; i--) body += draw([line], width / 2 - depth / 2 + i, top - depth / 2 + i, size, `fill="${shade}"`, true)
      body += draw([line], width / 2 - depth / 2, top - depth / 2, size, `fill="${color}" stroke="${shade}" stroke-width="${(size * 0.02).toFixed(1)}" paint-order="stroke"`)
      return { svg: svgDocument(width, H, background, body), width, height: H }
    }
  }
}
