/**
 * Lays a highlighted snippet out as ray.so draws it (gradient, window with three controls and a
 * title, code in JetBrains Mono) and writes the SVG. Sizes are CSS pixels; `scale` only sets the
 * SVG's width and height, so the PNG is the same drawing at that many device pixels.
 */
import type { FontStack, PlacedGlyph } from './fonts.js'
import type { Role, Token } from './highlight.js'
import type { Palette, Theme } from './themes.js'

export interface SceneOptions {
  theme: Theme
  darkMode: boolean
  background: boolean
  padding: number
  title: string
  lineNumbers: boolean
  /** 1-based line numbers to highlight. */
  highlight: ReadonlySet<number>
  fontSize: number
  maxWidth?: number
  scale: number
}

export interface Scene {
  svg: string
  /** Size in device pixels (CSS size times scale). */
  width: number
  height: number
}

/** Window geometry, after ray.so's frame. */
export const WINDOW = {
  header: 48,
  insetX: 16,
  bottom: 20,
  radius: 12,
  minWidth: 300,
  controls: ['#FF5F57', '#FEBC2E', '#28C840'],
  titleSize: 13,
  /** Room the three controls take on each side of a centred title. */
  titleMargin: 84,
  gutterGap: 20,
} as const

export const LINE_HEIGHT = 1.5
/** Columns of a tab stop. */
export const TAB_SIZE = 4

interface Cell {
  char: string
  role: Role
  width: number
}

interface Row {
  line: number
  first: boolean
  tokens: Token[]
  width: number
}

/** Splits one line into rows no wider than `limit` px, breaking after a space where it can. */
function wrapLine(cells: Cell[], line: number, limit: number): Row[] {
  const rows: Row[] = []
  let start = 0
  while (start < cells.length || rows.length === 0) {
    let width = 0
    let end = start
    let lastBreak = -1
    while (end < cells.length && (end === start || width + cells[end].width <= limit)) {
      width += cells[end].width
      if (cells[end].char === ' ') lastBreak = end + 1
      end++
    }
    if (end < cells.length && lastBreak > start) end = lastBreak
    rows.push(toRow(cells.slice(start, end), line, rows.length === 0))
    start = end
    if (cells.length === 0) break
  }
  return rows
}

function toRow(cells: Cell[], line: number, first: boolean): Row {
  const tokens: Token[] = []
  let width = 0
  for (const cell of cells) {
    width += cell.width
    const last = tokens[tokens.length - 1]
    if (last && last.role === cell.role) last.text += cell.char
    else tokens.push({ text: cell.char, role: cell.role })
  }
  return { line, first, tokens, width }
}

function escapeXml(text: string) {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)
}

/** `fill="#rrggbb"` plus an opacity for `rgba()` and `#rrggbbaa` colours (resvg and every viewer read these). */
function paint(color: string, attr: 'fill' | 'stroke' = 'fill', opacity = 1): string {
  let hex = color
  let alpha = opacity
  const rgba = /^rgba?\(([^)]+)\)$/.exec(color)
  if (rgba) {
    const [r, g, b, a = '1'] = rgba[1].split(',').map((x) => x.trim())
    hex = '#' + [r, g, b].map((v) => Number(v).toString(16).padStart(2, '0')).join('')
    alpha *= Number(a)
  }
  return alpha < 1 ? `${attr}="${hex}" ${attr}-opacity="${round(alpha)}"` : `${attr}="${hex}"`
}

const round = (n: number) => Math.round(n * 100) / 100

/** The end points of CSS `linear-gradient(140deg, ...)` over a w×h box, so the corners get the pure colours. */
function gradientLine(w: number, h: number, degrees = 140) {
  const a = (degrees * Math.PI) / 180
  const dx = Math.sin(a)
  const dy = -Math.cos(a)
  const half = (Math.abs(w * dx) + Math.abs(h * dy)) / 2
  return { x1: w / 2 - dx * half, y1: h / 2 - dy * half, x2: w / 2 + dx * half, y2: h / 2 + dy * half }
}

interface Box {
  x: number
  y: number
  w: number
  h: number
}

/**
 * A soft shadow drawn with gradients: four strips that start at the window's edges and fade
 * outwards, and four corner pieces that fade around the window's rounded corners. It looks like CSS's
 * blurred box-shadow, never shows through the translucent window, and costs next to nothing,
 * where resvg's feGaussianBlur took most of a render.
 */
function softShadow(b: Box, spread: number, alpha: number) {
  const r = WINDOW.radius
  const side = Math.max(2, spread)
  const top = side
  const bottom = side
  const stops = (inner: number) =>
    `<stop offset="${round(inner)}" stop-opacity="${alpha}"/><stop offset="${round(inner + (1 - inner) * 0.4)}" stop-opacity="${round(alpha * 0.35)}"/><stop offset="1" stop-opacity="0"/>`
  const linear = (id: string, x1: number, y1: number, x2: number, y2: number) =>
    `<linearGradient id="${id}" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}">${stops(0)}</linearGradient>`
  let defs = linear('sh-t', 0, 1, 0, 0) + linear('sh-b', 0, 0, 0, 1) + linear('sh-l', 1, 0, 0, 0) + linear('sh-r', 0, 0, 1, 0)
  // Corners: a radial fade around the centre of the window's rounded corner, full inside the corner's arc.
  const corners: Array<[string, number, number, number, number]> = [
    ['tl', b.x + r, b.y + r, -(side + r), -(top + r)],
    ['tr', b.x + b.w - r, b.y + r, side + r, -(top + r)],
    ['bl', b.x + r, b.y + b.h - r, -(side + r), bottom + r],
    ['br', b.x + b.w - r, b.y + b.h - r, side + r, bottom + r],
  ]
  let body =
    `<rect x="${b.x + r}" y="${b.y - top}" width="${b.w - 2 * r}" height="${top}" fill="url(#sh-t)"/>` +
    `<rect x="${b.x + r}" y="${b.y + b.h}" width="${b.w - 2 * r}" height="${bottom}" fill="url(#sh-b)"/>` +
    `<rect x="${b.x - side}" y="${b.y + r}" width="${side}" height="${b.h - 2 * r}" fill="url(#sh-l)"/>` +
    `<rect x="${b.x + b.w}" y="${b.y + r}" width="${side}" height="${b.h - 2 * r}" fill="url(#sh-r)"/>`
  for (const [id, cx, cy, dx, dy] of corners) {
    const rx = Math.abs(dx)
    const ry = Math.abs(dy)
    // In the piece's own box: the fade starts at the corner's arc, as the strips' fades start at the edges.
    defs += `<radialGradient id="sh-${id}" cx="${dx < 0 ? 1 : 0}" cy="${dy < 0 ? 1 : 0}" r="1">${stops(r / rx)}</radialGradient>`
    // The quarter of the corner square that lies outside the window's arc: the square minus the arc's disc.
    const x = dx < 0 ? cx + dx : cx
    const y = dy < 0 ? cy + dy : cy
    const sx = Math.sign(dx)
    const sy = Math.sign(dy)
    const d =
      `M${x} ${y}h${rx}v${ry}h${-rx}Z` +
      `M${cx} ${cy}h${sx * r}A${r} ${r} 0 0 ${sx * sy > 0 ? 1 : 0} ${cx} ${cy + sy * r}Z`
    body += `<path fill-rule="evenodd" d="${d}" fill="url(#sh-${id})"/>`
  }
  return { defs, body }
}

class GlyphWriter {
  private readonly used = new Map<string, string>()
  constructor(private readonly fonts: FontStack) {}

  /** `<g>`s that draw glyphs whose `x` is in em from (x, baseline); one group per font. */
  draw(glyphs: Array<PlacedGlyph & { color?: string }>, x: number, baseline: number, size: number, groupColor?: string): string {
    const byFont = new Map<number, typeof glyphs>()
    for (const glyph of glyphs) {
      if (!this.fonts.glyphPath(glyph.font, glyph.id)) continue
      const list = byFont.get(glyph.font) ?? []
      list.push(glyph)
      byFont.set(glyph.font, list)
    }
    let out = ''
    for (const [font, list] of byFont) {
      const upem = this.fonts.unitsPerEm(font)
      const s = size / upem
      const fill = groupColor ? ' ' + paint(groupColor) : ''
      out += `<g transform="translate(${round(x)} ${round(baseline)}) scale(${s} ${-s})"${fill}>`
      for (const glyph of list) {
        const ref = this.ref(glyph.font, glyph.id)
        const y = glyph.y ? ` y="${Math.round(glyph.y * upem)}"` : ''
        const fill = !glyph.color || glyph.color === groupColor ? '' : ' ' + paint(glyph.color)
        out += `<use href="#${ref}" x="${Math.round(glyph.x * upem)}"${y}${fill}/>`
      }
      out += '</g>'
    }
    return out
  }

  defs(): string {
    let out = ''
    for (const [key, ref] of this.used) {
      const [font, id] = key.split(':').map(Number)
      out += `<path id="${ref}" d="${this.fonts.glyphPath(font, id)}"/>`
    }
    return out
  }

  private ref(font: number, id: number) {
    const key = `${font}:${id}`
    let ref = this.used.get(key)
    if (!ref) {
      ref = `g${font}-${id}`
      this.used.set(key, ref)
    }
    return ref
  }
}

/** Thrown when the drawing would pass the pixel budget; the caller answers 413. */
export class TooLargeError extends Error {}

export const MAX_PIXELS = 40_000_000

export function buildScene(fonts: FontStack, lines: Token[][], o: SceneOptions): Scene {
  const palette: Palette = o.darkMode ? o.theme.dark : o.theme.light
  const fs = o.fontSize
  const lineHeight = fs * LINE_HEIGHT
  const digitWidth = fonts.advance('0') * fs
  const gutter = o.lineNumbers ? String(lines.length).length * digitWidth + WINDOW.gutterGap : 0
  const codeLimit = o.maxWidth ? o.maxWidth - 2 * o.padding - 2 * WINDOW.insetX - gutter : Infinity

  const rows: Row[] = []
  lines.forEach((tokens, i) => {
    const cells: Cell[] = []
    for (const token of tokens) for (const char of token.text) cells.push({ char, role: token.role, width: fonts.advance(char) * fs })
    rows.push(...wrapLine(cells, i + 1, Math.max(codeLimit, digitWidth)))
  })

  const titleSize = WINDOW.titleSize
  let title = o.title.replace(/\s+/g, ' ').trim()
  const contentWidth = Math.max(0, ...rows.map((r) => r.width))
  const wanted = title ? fonts.shape(title).width * titleSize + 2 * WINDOW.titleMargin : 0
  let w = Math.ceil(Math.max(2 * WINDOW.insetX + gutter + contentWidth, wanted, WINDOW.minWidth))
  if (o.maxWidth) w = Math.min(w, Math.max(o.maxWidth - 2 * o.padding, WINDOW.minWidth))
  const titleRoom = w - 2 * WINDOW.titleMargin
  if (title && fonts.shape(title).width * titleSize > titleRoom) {
    while (title.length > 1 && fonts.shape(title + '…').width * titleSize > titleRoom) title = [...title].slice(0, -1).join('')
    title = title.trimEnd() + '…'
  }
  const h = Math.ceil(WINDOW.header + rows.length * lineHeight + WINDOW.bottom)
  const P = o.padding
  const width = (w + 2 * P) * o.scale
  const height = (h + 2 * P) * o.scale
  if (width * height > MAX_PIXELS) {
    throw new TooLargeError(
      `The image would be ${width}×${height} pixels, more than the ${MAX_PIXELS / 1e6}-megapixel limit; use a smaller scale, fontSize or snippet`,
    )
  }

  const glyphs = new GlyphWriter(fonts)
  const body: string[] = []
  const defs: string[] = []
  const W = w + 2 * P
  const H = h + 2 * P

  if (o.background) {
    const g = gradientLine(W, H)
    defs.push(
      `<linearGradient id="bg" gradientUnits="userSpaceOnUse" x1="${round(g.x1)}" y1="${round(g.y1)}" x2="${round(g.x2)}" y2="${round(g.y2)}">` +
        `<stop offset="0" stop-color="${o.theme.from}"/><stop offset="1" stop-color="${o.theme.to}"/></linearGradient>`,
    )
    body.push(`<rect width="${W}" height="${H}" fill="url(#bg)"/>`)
    const spread = Math.min(48, P * 0.75)
    const shadow = softShadow({ x: P, y: P, w, h }, spread, o.darkMode ? 0.5 : 0.25)
    defs.push(shadow.defs)
    body.push(shadow.body)
  }
  const windowFill = o.darkMode ? (o.background ? paint('rgba(0,0,0,0.75)') : paint('#161616')) : o.background ? paint('rgba(255,255,255,0.8)') : paint('#ffffff')
  body.push(`<rect x="${P}" y="${P}" width="${w}" height="${h}" rx="${WINDOW.radius}" ${windowFill}/>`)
  body.push(
    `<rect x="${P + 0.5}" y="${P + 0.5}" width="${w - 1}" height="${h - 1}" rx="${WINDOW.radius - 0.5}" fill="none" ${paint(o.darkMode ? 'rgba(255,255,255,0.15)' : 'rgba(0,0,0,0.1)', 'stroke')}/>`,
  )
  WINDOW.controls.forEach((color, i) => body.push(`<circle cx="${P + 22 + i * 20}" cy="${P + WINDOW.header / 2}" r="6" fill="${color}"/>`))

  const ascent = fonts.metrics.ascent
  const descent = fonts.metrics.descent
  if (title) {
    const shaped = fonts.shape(title)
    const x = P + (w - shaped.width * titleSize) / 2
    const baseline = P + WINDOW.header / 2 + ((ascent + descent) / 2) * titleSize
    const color = o.darkMode ? 'rgba(255,255,255,0.6)' : 'rgba(0,0,0,0.6)'
    body.push(`<g ${paint(color)}>${glyphs.draw(shaped.glyphs, x, baseline, titleSize)}</g>`)
  }

  const codeX = P + WINDOW.insetX + gutter
  const top = P + WINDOW.header
  const highlightFill = palette.highlight ?? palette.foreground
  const highlightOpacity = palette.highlight ? 1 : 0.1
  rows.forEach((row, r) => {
    const y = top + r * lineHeight
    if (o.highlight.has(row.line)) {
      body.push(`<rect x="${P}" y="${round(y)}" width="${w}" height="${round(lineHeight)}" ${paint(highlightFill, 'fill', highlightOpacity)}/>`)
      body.push(`<rect x="${P}" y="${round(y)}" width="3" height="${round(lineHeight)}" ${paint(palette.highlightBorder ?? palette.keyword)}/>`)
    }
  })
  rows.forEach((row, r) => {
    const baseline = top + r * lineHeight + lineHeight / 2 + ((ascent + descent) / 2) * fs
    if (o.lineNumbers && row.first) {
      const number = fonts.shape(String(row.line))
      const x = codeX - WINDOW.gutterGap - number.width * fs
      body.push(`<g fill-opacity="0.7">${glyphs.draw(number.glyphs, x, baseline, fs, palette.comment)}</g>`)
    }
    const placed: Array<PlacedGlyph & { color: string }> = []
    let cursor = 0
    for (const token of row.tokens) {
      const shaped = fonts.shape(token.text)
      for (const glyph of shaped.glyphs) placed.push({ ...glyph, x: glyph.x + cursor, color: palette[token.role] })
      cursor += shaped.width
    }
    if (placed.length) body.push(glyphs.draw(placed, codeX, baseline, fs, palette.foreground))
  })

  const label = o.title ? `<title>${escapeXml(o.title)}</title>` : ''
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${W} ${H}">` +
    label +
    `<defs>${defs.join('')}${glyphs.defs()}</defs>` +
    body.join('') +
    '</svg>'
  return { svg, width, height }
}
