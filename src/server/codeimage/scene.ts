/**
 * Lays a highlighted snippet out as ray.so draws it (gradient, window with three controls and a
 * title, code in JetBrains Mono) and writes the SVG. Sizes are CSS pixels; `scale` only sets the
 * SVG's width and height, so the PNG is the same drawing at that many device pixels.
 */
import type { FontStack, PlacedGlyph } from './fonts.js'
import type { Role, Token } from './highlight.js'
import type { Palette, Theme } from './themes.js'
import { hasEmoji, splitEmoji } from '../render/emoji.js'
import { drawableEmoji, EMOJI_CELLS, emojiMarkup, type PlacedEmoji } from './emoji.js'

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
  /** The background's colours instead of the theme's (from = to: one colour). */
  backgroundColor?: { from: string; to: string }
  /** A picture over the background, covering the canvas: the SVG's `<image>` source (a data: URI). */
  backgroundImage?: string
  /** false: no window controls. */
  windowControls?: boolean
}

export interface Scene {
  /** Size in device pixels (CSS size times scale). */
  width: number
  height: number
  /** The whole drawing as one SVG (the `svg` format, and what resvg draws for transparent PNGs). */
  svg(): string
  /** The same drawing taken apart for the raster compositor (compose.ts). */
  layers: Layers
}

/** An sRGB colour with its alpha, 0-255 and 0-1. */
export interface Rgba {
  r: number
  g: number
  b: number
  a: number
}

/** One offset/opacity stop of the black shadow's fade. */
export interface ShadowStop {
  offset: number
  opacity: number
}

/** Glyphs drawn from (x, baseline) in CSS px: one row of code, or one line number. */
export interface GlyphRun {
  x: number
  baseline: number
  size: number
  /** Colour of glyphs that carry none of their own (none for the title, whose group sets it). */
  color?: string
  /** The run's fill-opacity (line numbers are drawn at 0.7). */
  opacity: number
  glyphs: Array<PlacedGlyph & { color?: string }>
}

/**
 * The scene as the compositor draws it, in CSS pixels (times `scale` for device pixels), in
 * painting order: gradient, shadow, window fill, then `chrome` (border, controls, title) through
 * resvg, then highlight bands, then the glyph runs.
 */
export interface Layers {
  scale: number
  /** Canvas size. */
  W: number
  H: number
  /** The window, with its corner radius `WINDOW.radius`. */
  window: Box
  /** Height of the window's title bar (`WINDOW.header`), or of the plain margin above the code when it has no bar. */
  header: number
  /** CSS `linear-gradient(140deg, from, to)` from (x1, y1) to (x2, y2); null without the background. */
  gradient: { from: string; to: string; x1: number; y1: number; x2: number; y2: number } | null
  /**
   * The background picture as RGB pixels of the whole canvas (device px, cropped to cover), painted
   * instead of the gradient; the renderer decodes it (sharp) and sets it before compositing.
   */
  image?: Buffer
  /**
   * The shadow, `spread` px wide outside the window's edge: the strips' fade over the distance from
   * the edge (0 to `spread`), the corners' over the distance from the corner's centre (0 to radius + spread).
   * Null without the background.
   */
  shadow: { spread: number; stops: ShadowStop[]; cornerStops: ShadowStop[] } | null
  windowFill: Rgba
  /** An SVG of the border, the controls and the title only, showing `viewBox` at `width`×`height` device px. */
  chrome(viewBox: Box, width: number, height: number): string
  bands: Array<Box & { fill: Rgba }>
  runs: GlyphRun[]
  /** Colour emoji, painted after the glyphs (see emoji.ts). */
  emoji: PlacedEmoji[]
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
  /** A whole emoji cluster, drawn from Twemoji and two cells wide. */
  emoji?: boolean
}

/** A token of a laid-out row: plain text, or exactly one emoji cluster. */
export interface RowToken extends Token {
  emoji?: boolean
}

export interface Row {
  line: number
  first: boolean
  tokens: RowToken[]
  width: number
}

/** The cells of one line: a character each, or an emoji cluster Twemoji draws, two cells wide. */
function lineCells(fonts: FontStack, tokens: Token[], fs: number): Cell[] {
  const cells: Cell[] = []
  const cell = fonts.advance('0') * fs
  for (const token of tokens) {
    const pieces = hasEmoji(token.text) ? splitEmoji(token.text) : [{ text: token.text, emoji: false }]
    for (const piece of pieces) {
      if (piece.emoji && drawableEmoji(piece.text)) {
        cells.push({ char: piece.text, role: token.role, width: EMOJI_CELLS * cell, emoji: true })
        continue
      }
      for (const char of piece.text) cells.push({ char, role: token.role, width: fonts.advance(char) * fs })
    }
  }
  return cells
}

/** Lays the highlighted lines out as rows, wrapping lines wider than `limit` px. */
export function layoutRows(fonts: FontStack, lines: Token[][], fs: number, limit: number): Row[] {
  const rows: Row[] = []
  lines.forEach((tokens, i) => rows.push(...wrapLine(lineCells(fonts, tokens, fs), i + 1, limit)))
  return rows
}

/**
 * A row's glyphs (x in em from the row's start, coloured by role) and its emoji (x in em of the
 * two cells' start); the cursor moves by each token's own advance, so columns stay aligned.
 */
export function placeRow(fonts: FontStack, row: Row, palette: Palette): { glyphs: Array<PlacedGlyph & { color: string }>; emoji: Array<{ cluster: string; x: number }> } {
  const glyphs: Array<PlacedGlyph & { color: string }> = []
  const emoji: Array<{ cluster: string; x: number }> = []
  const cell = fonts.advance('0')
  let cursor = 0
  for (const token of row.tokens) {
    if (token.emoji) {
      emoji.push({ cluster: token.text, x: cursor })
      cursor += EMOJI_CELLS * cell
      continue
    }
    const shaped = fonts.shape(token.text)
    const color = palette[token.role]
    for (const glyph of shaped.glyphs) glyphs.push({ font: glyph.font, id: glyph.id, x: glyph.x + cursor, y: glyph.y, color })
    cursor += shaped.width
  }
  return { glyphs, emoji }
}

/**
 * Where an emoji of a row is drawn: one em square (whole CSS px) centred in its two cells and
 * on the line's middle.
 */
export function emojiBox(fonts: FontStack, cluster: string, rowX: number, emX: number, lineTop: number, lineHeight: number, fs: number): PlacedEmoji {
  const size = Math.round(fs)
  const span = EMOJI_CELLS * fonts.advance('0') * fs
  return { cluster, x: Math.round(rowX + emX * fs + (span - size) / 2), y: Math.round(lineTop + (lineHeight - size) / 2), size }
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
  const tokens: RowToken[] = []
  let width = 0
  for (const cell of cells) {
    width += cell.width
    const last = tokens[tokens.length - 1]
    if (cell.emoji) tokens.push({ text: cell.char, role: cell.role, emoji: true })
    else if (last && !last.emoji && last.role === cell.role) last.text += cell.char
    else tokens.push({ text: cell.char, role: cell.role })
  }
  return { line, first, tokens, width }
}

export function escapeXml(text: string) {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)
}

/** `#rgb`, `#rrggbb` or `rgba(r, g, b, a)` as numbers, the alpha times `opacity` and rounded as `paint` writes it. */
export function parseColor(color: string, opacity = 1): Rgba {
  const rgba = /^rgba?\(([^)]+)\)$/.exec(color)
  if (rgba) {
    const [r, g, b, a = 1] = rgba[1].split(',').map((x) => Number(x.trim()))
    return { r, g, b, a: opacity * a < 1 ? round(opacity * a) : 1 }
  }
  const hex = color.slice(1)
  const n = parseInt(hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex.slice(0, 6), 16)
  return { r: n >> 16, g: (n >> 8) & 255, b: n & 255, a: opacity < 1 ? round(opacity) : 1 }
}

/** `fill="#rrggbb"` plus an opacity for `rgba()` colours (resvg and every viewer read these). */
export function paint(color: string, attr: 'fill' | 'stroke' = 'fill', opacity = 1): string {
  const { r, g, b, a } = parseColor(color, opacity)
  const hex = color.startsWith('#') ? color : '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')
  return a < 1 ? `${attr}="${hex}" ${attr}-opacity="${a}"` : `${attr}="${hex}"`
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

export interface Box {
  x: number
  y: number
  w: number
  h: number
}

/**
 * The shadow's fade from `inner` (the window's edge) to 1 (`spread` px further out), as written
 * in the SVG; the compositor reads the same rounded values.
 */
export function shadowStops(alpha: number, inner = 0): ShadowStop[] {
  return [
    { offset: round(inner), opacity: alpha },
    { offset: round(inner + (1 - inner) * 0.4), opacity: round(alpha * 0.35) },
    { offset: 1, opacity: 0 },
  ]
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
  const stops = (inner: number) => shadowStops(alpha, inner).map((s) => `<stop offset="${s.offset}" stop-opacity="${s.opacity}"/>`).join('')
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

/**
 * A one-line label (a window title) shaped with its emoji: glyphs and emoji positions in em from
 * its start, each emoji two cells wide as in the code.
 */
export function shapeLabel(fonts: FontStack, text: string): { glyphs: PlacedGlyph[]; emoji: Array<{ cluster: string; x: number }>; width: number } {
  if (!hasEmoji(text)) {
    const shaped = fonts.shape(text)
    return { glyphs: shaped.glyphs, emoji: [], width: shaped.width }
  }
  const glyphs: PlacedGlyph[] = []
  const emoji: Array<{ cluster: string; x: number }> = []
  let x = 0
  for (const piece of splitEmoji(text)) {
    if (piece.emoji && drawableEmoji(piece.text)) {
      emoji.push({ cluster: piece.text, x })
      x += EMOJI_CELLS * fonts.advance('0')
      continue
    }
    const shaped = fonts.shape(piece.text)
    for (const glyph of shaped.glyphs) glyphs.push({ ...glyph, x: glyph.x + x })
    x += shaped.width
  }
  return { glyphs, emoji, width: x }
}

/** A label's emoji as placed pictures: `size` px squares centred in their two cells, on the line through `middle`. */
export function labelEmoji(fonts: FontStack, label: ReturnType<typeof shapeLabel>, x: number, middle: number, size: number): PlacedEmoji[] {
  const span = EMOJI_CELLS * fonts.advance('0') * size
  return label.emoji.map((e) => ({ cluster: e.cluster, x: Math.round(x + e.x * size + (span - size) / 2), y: Math.round(middle - size / 2), size }))
}

/** Where a run starts, rounded as the SVG writes it. */
export function runOrigin(run: Pick<GlyphRun, 'x' | 'baseline'>) {
  return { x: round(run.x), y: round(run.baseline) }
}

/** A glyph's offset from its run's origin in whole font units (y up), as the SVG writes it. */
export function glyphUnits(glyph: PlacedGlyph, upem: number) {
  return { x: Math.round(glyph.x * upem), y: Math.round(glyph.y * upem) }
}

export class GlyphWriter {
  private readonly used = new Map<string, string>()
  constructor(private readonly fonts: FontStack) {}

  /** `<g>`s that draw a run's glyphs (`x` in em from the run's origin); one group per font. */
  draw({ glyphs, size, color: groupColor, ...run }: GlyphRun): string {
    const origin = runOrigin(run)
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
      out += `<g transform="translate(${origin.x} ${origin.y}) scale(${s} ${-s})"${fill}>`
      for (const glyph of list) {
        const ref = this.ref(glyph.font, glyph.id)
        const units = glyphUnits(glyph, upem)
        const y = units.y ? ` y="${units.y}"` : ''
        const fill = !glyph.color || glyph.color === groupColor ? '' : ' ' + paint(glyph.color)
        out += `<use href="#${ref}" x="${units.x}"${y}${fill}/>`
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

  const rows = layoutRows(fonts, lines, fs, Math.max(codeLimit, digitWidth))

  const titleSize = WINDOW.titleSize
  let title = o.title.replace(/\s+/g, ' ').trim()
  const contentWidth = Math.max(0, ...rows.map((r) => r.width))
  const wanted = title ? shapeLabel(fonts, title).width * titleSize + 2 * WINDOW.titleMargin : 0
  let w = Math.ceil(Math.max(2 * WINDOW.insetX + gutter + contentWidth, wanted, WINDOW.minWidth))
  if (o.maxWidth) w = Math.min(w, Math.max(o.maxWidth - 2 * o.padding, WINDOW.minWidth))
  const titleRoom = w - 2 * WINDOW.titleMargin
  if (title && shapeLabel(fonts, title).width * titleSize > titleRoom) {
    while (title.length > 1 && shapeLabel(fonts, title + '…').width * titleSize > titleRoom) title = [...title].slice(0, -1).join('')
    title = title.trimEnd() + '…'
  }
  // A bar holds the controls or the title; with neither, the code starts below a margin like the one under it.
  const header = o.windowControls !== false || title ? WINDOW.header : WINDOW.bottom
  const h = Math.ceil(header + rows.length * lineHeight + WINDOW.bottom)
  const P = o.padding
  const width = (w + 2 * P) * o.scale
  const height = (h + 2 * P) * o.scale
  if (width * height > MAX_PIXELS) {
    throw new TooLargeError(
      `The image would be ${width}×${height} pixels, more than the ${MAX_PIXELS / 1e6}-megapixel limit; use a smaller scale, fontSize or snippet`,
    )
  }

  const W = w + 2 * P
  const H = h + 2 * P
  const win: Box = { x: P, y: P, w, h }
  const defs: string[] = []
  /** Gradient, shadow and the window's fill: what the compositor draws without resvg. */
  const backdrop: string[] = []
  /** Border, controls and title: what resvg draws in both ways of rendering. */
  const chrome: string[] = []
  const chromeGlyphs = new GlyphWriter(fonts)

  let gradient: Layers['gradient'] = null
  let shadow: Layers['shadow'] = null
  if (o.background) {
    const g = gradientLine(W, H)
    const colors = o.backgroundColor ?? { from: o.theme.from, to: o.theme.to }
    gradient = { from: colors.from, to: colors.to, x1: round(g.x1), y1: round(g.y1), x2: round(g.x2), y2: round(g.y2) }
    defs.push(
      `<linearGradient id="bg" gradientUnits="userSpaceOnUse" x1="${gradient.x1}" y1="${gradient.y1}" x2="${gradient.x2}" y2="${gradient.y2}">` +
        `<stop offset="0" stop-color="${colors.from}"/><stop offset="1" stop-color="${colors.to}"/></linearGradient>`,
    )
    backdrop.push(`<rect width="${W}" height="${H}" fill="url(#bg)"/>`)
    if (o.backgroundImage) backdrop.push(`<image href="${escapeXml(o.backgroundImage)}" width="${W}" height="${H}" preserveAspectRatio="xMidYMid slice"/>`)
    const spread = Math.min(48, P * 0.75)
    const alpha = o.darkMode ? 0.5 : 0.25
    const drawn = softShadow(win, spread, alpha)
    defs.push(drawn.defs)
    backdrop.push(drawn.body)
    const side = Math.max(2, spread)
    shadow = { spread: side, stops: shadowStops(alpha), cornerStops: shadowStops(alpha, WINDOW.radius / (side + WINDOW.radius)) }
  }
  const windowColor = o.darkMode ? (o.background ? 'rgba(0,0,0,0.75)' : '#161616') : o.background ? 'rgba(255,255,255,0.8)' : '#ffffff'
  backdrop.push(`<rect x="${P}" y="${P}" width="${w}" height="${h}" rx="${WINDOW.radius}" ${paint(windowColor)}/>`)
  chrome.push(
    `<rect x="${P + 0.5}" y="${P + 0.5}" width="${w - 1}" height="${h - 1}" rx="${WINDOW.radius - 0.5}" fill="none" ${paint(o.darkMode ? 'rgba(255,255,255,0.15)' : 'rgba(0,0,0,0.1)', 'stroke')}/>`,
  )
  if (o.windowControls !== false) WINDOW.controls.forEach((color, i) => chrome.push(`<circle cx="${P + 22 + i * 20}" cy="${P + WINDOW.header / 2}" r="6" fill="${color}"/>`))

  const ascent = fonts.metrics.ascent
  const descent = fonts.metrics.descent
  let titleRun: GlyphRun | null = null
  const titleEmoji: PlacedEmoji[] = []
  if (title) {
    const shaped = shapeLabel(fonts, title)
    const x = P + (w - shaped.width * titleSize) / 2
    const baseline = P + WINDOW.header / 2 + ((ascent + descent) / 2) * titleSize
    titleEmoji.push(...labelEmoji(fonts, shaped, x, P + WINDOW.header / 2, titleSize))
    const color = o.darkMode ? 'rgba(255,255,255,0.6)' : 'rgba(0,0,0,0.6)'
    titleRun = { glyphs: shaped.glyphs, x, baseline, size: titleSize, opacity: 1 }
    chrome.push(`<g ${paint(color)}>${chromeGlyphs.draw(titleRun)}</g>`)
  }

  const codeX = P + WINDOW.insetX + gutter
  const top = P + header
  const highlightFill = palette.highlight ?? palette.foreground
  const highlightOpacity = palette.highlight ? 1 : 0.1
  const bands: Layers['bands'] = []
  rows.forEach((row, r) => {
    const y = round(top + r * lineHeight)
    if (o.highlight.has(row.line)) {
      bands.push({ x: P, y, w, h: round(lineHeight), fill: parseColor(highlightFill, highlightOpacity) })
      bands.push({ x: P, y, w: 3, h: round(lineHeight), fill: parseColor(palette.highlightBorder ?? palette.keyword) })
    }
  })
  const runs: GlyphRun[] = []
  const emoji: PlacedEmoji[] = []
  rows.forEach((row, r) => {
    const baseline = top + r * lineHeight + lineHeight / 2 + ((ascent + descent) / 2) * fs
    if (o.lineNumbers && row.first) {
      const number = fonts.shape(String(row.line))
      runs.push({ glyphs: number.glyphs, x: codeX - WINDOW.gutterGap - number.width * fs, baseline, size: fs, color: palette.comment, opacity: 0.7 })
    }
    const { glyphs: placed, emoji: pictures } = placeRow(fonts, row, palette)
    for (const e of pictures) emoji.push(emojiBox(fonts, e.cluster, codeX, e.x, top + r * lineHeight, lineHeight, fs))
    if (placed.length) runs.push({ glyphs: placed, x: codeX, baseline, size: fs, color: palette.foreground, opacity: 1 })
  })

  const bandSvg = bands.map((b) => `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" ${paint(`rgba(${b.fill.r},${b.fill.g},${b.fill.b},${b.fill.a})`)}/>`)

  const chromeSvg = (view: Box, pxWidth: number, pxHeight: number) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pxWidth}" height="${pxHeight}" viewBox="${view.x} ${view.y} ${view.w} ${view.h}">` +
    `<defs>${chromeGlyphs.defs()}</defs>${chrome.join('')}${emojiMarkup(titleEmoji, 'te', view)}</svg>`

  const svg = () => {
    const glyphs = new GlyphWriter(fonts)
    // The title's glyphs first, as the chrome drew them, so the defs keep the order they always had.
    if (titleRun) glyphs.draw(titleRun)
    const body = [...backdrop, ...chrome, emojiMarkup(titleEmoji, 'te'), ...bandSvg]
    for (const run of runs) body.push(run.opacity < 1 ? `<g fill-opacity="${run.opacity}">${glyphs.draw(run)}</g>` : glyphs.draw(run))
    body.push(emojiMarkup(emoji))
    const label = o.title ? `<title>${escapeXml(o.title)}</title>` : ''
    return (
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${W} ${H}">` +
      label +
      `<defs>${defs.join('')}${glyphs.defs()}</defs>` +
      body.join('') +
      '</svg>'
    )
  }
  const windowFill = parseColor(windowColor)
  return { width, height, svg, layers: { scale: o.scale, W, H, window: win, header, gradient, shadow, windowFill, chrome: chromeSvg, bands, runs, emoji } }
}
