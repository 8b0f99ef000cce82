/**
 * Lays a highlighted snippet out as carbon.now.sh draws it and writes the SVG: a solid background
 * colour (translucent or transparent allowed), the editor window in the theme's background with
 * 5-px corners (square with `sharp`, a 2-px white border with `bw`), the window controls
 * (carbon's three coloured circles, outlined grey ones with `bw`, or minimise/maximise/close on
 * the right with `boxy`), CSS's `box-shadow: 0 offsetY blur rgba(0, 0, 0, 0.55)` and the code with
 * optional line numbers. Sizes are CSS pixels; `scale` (carbon's export size) only sets the SVG's
 * size. Glyphs and emoji are laid out by the code-image scene's own functions, so columns, wrapping
 * and emoji (two cells, Twemoji) behave as in `/api/codeimage`.
 */
import { CARBON_PALETTES } from './themes.js'
import type { CarbonLook } from '../renderer.js'
import { emojiMarkup, type PlacedEmoji } from '../emoji.js'
import type { FontStack } from '../fonts.js'
import type { Token } from '../highlight.js'
import { emojiBox, escapeXml, GlyphWriter, labelEmoji, shapeLabel, layoutRows, MAX_PIXELS, paint, parseColor, placeRow, TooLargeError, type GlyphRun, type Rgba } from '../scene.js'

/** carbon's editor box (CodeMirror's padding), in CSS px. */
export const CARBON_EDITOR = {
  radius: 5,
  top: 18,
  /** The top padding when the window controls are drawn. */
  topWithControls: 48,
  bottom: 18,
  left: 12,
  right: 18,
  /** Room between the line numbers and the code. */
  gutterGap: 12,
  /** Narrowest window, and the widest image when the window fits the code (carbon's container limits). */
  minWidth: 120,
  maxImageWidth: 1024,
  controlsY: 22,
  titleSize: 14,
  /** Room the controls take on each side of a centred title. */
  titleMargin: 70,
  shadowColor: 'rgba(0, 0, 0, 0.55)',
} as const

export interface CarbonScene {
  width: number
  height: number
  /** The whole drawing, for resvg alone (what compose.ts must match). */
  svg: string
  /** The same drawing taken apart for carbon/compose.ts: the backdrop as numbers, the rest as SVG. */
  layers: CarbonLayers
}

export interface CarbonLayers {
  scale: number
  /** Canvas size in CSS px. */
  W: number
  H: number
  background: Rgba
  /** The window: its box and corner radius, CSS px, its fill, and the height of its top padding (the bar). */
  window: { x: number; y: number; w: number; h: number; r: number; fill: Rgba; header: number }
  /** The drop shadow: black at `alpha`, the window's box moved down by `offsetY` and blurred with `sigma`. */
  shadow: { offsetY: number; sigma: number; alpha: number } | null
  /** Everything in front of the shadow (window, controls, title, code, emoji) on a transparent canvas. */
  front: string
  /** An SVG of the border, controls and title only, showing `viewBox` at `width`×`height` device px. */
  chrome(viewBox: { x: number; y: number; w: number; h: number }, width: number, height: number): string
  /** The code and line numbers, for the glyph atlas. */
  runs: GlyphRun[]
  emoji: PlacedEmoji[]
}

const round = (n: number) => Math.round(n * 100) / 100

/** A rectangle with corner radius r as path data (for the clip that keeps the shadow outside the window). */
function roundedRect(x: number, y: number, w: number, h: number, r: number) {
  if (r <= 0) return `M${x} ${y}h${w}v${h}h${-w}Z`
  return `M${x + r} ${y}h${w - 2 * r}a${r} ${r} 0 0 1 ${r} ${r}v${h - 2 * r}a${r} ${r} 0 0 1 ${-r} ${r}h${-(w - 2 * r)}a${r} ${r} 0 0 1 ${-r} ${-r}v${-(h - 2 * r)}a${r} ${r} 0 0 1 ${r} ${-r}Z`
}

/** The window controls, drawn from the window's top-left corner (x, y). */
function controls(look: CarbonLook, x: number, y: number, w: number) {
  const cy = y + CARBON_EDITOR.controlsY + (look.windowTheme === 'bw' ? 2 : 0)
  if (look.windowTheme === 'boxy') {
    // Minimise, maximise, close: grey strokes on the right.
    const right = x + w - 16
    const top = cy - 6
    return (
      `<g fill="none" stroke="#878787" stroke-width="1" stroke-linecap="round">` +
      `<path d="M${right - 57} ${cy}h10"/>` +
      `<rect x="${right - 33.5}" y="${top + 0.5}" width="11" height="11" rx="1"/>` +
      `<path d="M${right - 10} ${top + 1}l10 10M${right - 10} ${top + 11}l10 -10"/></g>`
    )
  }
  const left = x + (look.windowTheme === 'bw' ? 23 : 21)
  if (look.windowTheme === 'bw') {
    return `<g fill="none" stroke="#878787" stroke-width="1">${[0, 1, 2].map((i) => `<circle cx="${left + i * 20}" cy="${cy}" r="6"/>`).join('')}</g>`
  }
  const colours = [
    ['#FF5F56', '#E0443E'],
    ['#FFBD2E', '#DEA123'],
    ['#27C93F', '#1AAB29'],
  ]
  return colours.map(([fill, stroke], i) => `<circle cx="${left + i * 20}" cy="${cy}" r="6" fill="${fill}" stroke="${stroke}" stroke-width="0.5"/>`).join('')
}

export function buildCarbonScene(fonts: FontStack, lines: Token[][], look: CarbonLook, scale: number): CarbonScene {
  const theme = CARBON_PALETTES[look.theme]
  const palette = theme.palette
  const E = CARBON_EDITOR
  const fs = look.fontSize
  const lineHeight = fs * look.lineHeight
  const cell = fonts.advance('0') * fs
  const lastNumber = look.firstLineNumber + lines.length - 1
  const gutter = look.lineNumbers ? String(lastNumber).length * cell + E.gutterGap : 0
  const padX = look.paddingHorizontal
  const padY = look.paddingVertical
  const insets = E.left + E.right + gutter
  const title = look.windowControls ? look.title.replace(/\s+/g, ' ').trim() : ''

  // The window's width: `width` fixes the image's; otherwise it fits the code, within carbon's limits.
  const maxWindow = look.width !== null ? look.width - 2 * padX : Math.max(E.minWidth, E.maxImageWidth - 2 * padX)
  const rows = layoutRows(fonts, lines, fs, Math.max(maxWindow - insets, 2 * cell))
  const contentWidth = Math.max(0, ...rows.map((r) => r.width))
  const titleWidth = title ? fonts.shape(title).width * E.titleSize + 2 * E.titleMargin : 0
  const w = look.width !== null ? maxWindow : Math.ceil(Math.min(maxWindow, Math.max(insets + contentWidth, titleWidth, E.minWidth)))
  const top = look.windowControls ? E.topWithControls : E.top
  const h = Math.ceil(top + rows.length * lineHeight + E.bottom)

  let W = w + 2 * padX
  let H = h + 2 * padY
  if (look.squared) W = H = Math.max(W, H)
  const width = Math.round(W * scale)
  const height = Math.round(H * scale)
  if (width * height > MAX_PIXELS) {
    throw new TooLargeError(`The image would be ${width}×${height} pixels, more than the ${MAX_PIXELS / 1e6}-megapixel limit; use a smaller exportSize, fontSize or snippet`)
  }
  // Whole CSS px (a squared image may have an odd difference), so the window's edges fall on device pixels.
  const x = Math.floor((W - w) / 2)
  const y = Math.floor((H - h) / 2)
  const radius = look.windowTheme === 'sharp' ? 0 : E.radius
  const defs: string[] = []
  /** Background and shadow: what compose.ts paints itself. */
  const back: string[] = []

  const backdrop = parseColor(look.background)
  if (backdrop.a > 0) back.push(`<rect width="${W}" height="${H}" ${paint(look.background)}/>`)

  if (look.dropShadow) {
    // CSS draws a box's outer shadow only outside the box: clipped to the canvas minus the window.
    const { offsetY, blur } = look.dropShadow
    defs.push(`<clipPath id="outside"><path clip-rule="evenodd" d="M0 0h${W}v${H}h${-W}Z${roundedRect(x, y, w, h, radius)}"/></clipPath>`)
    let filter = ''
    if (blur > 0) {
      // A CSS blur radius is twice the Gaussian's standard deviation.
      defs.push(`<filter id="shadow" filterUnits="userSpaceOnUse" x="0" y="0" width="${W}" height="${H}"><feGaussianBlur stdDeviation="${round(blur / 2)}"/></filter>`)
      filter = ' filter="url(#shadow)"'
    }
    back.push(`<g clip-path="url(#outside)"><rect x="${x}" y="${y + offsetY}" width="${w}" height="${h}" rx="${radius}" ${paint(E.shadowColor)}${filter}/></g>`)
  }

  const windowRect = `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${radius}" ${paint(theme.background)}/>`
  /** Border, controls and title: resvg draws them in both ways of rendering. */
  const chrome: string[] = []
  const chromeGlyphs = new GlyphWriter(fonts)
  if (look.windowTheme === 'bw') chrome.push(`<rect x="${x + 1}" y="${y + 1}" width="${w - 2}" height="${h - 2}" rx="${Math.max(0, radius - 1)}" fill="none" stroke="#ffffff" stroke-width="2"/>`)
  if (look.windowControls) chrome.push(controls(look, x, y, w))

  const ascent = fonts.metrics.ascent
  const descent = fonts.metrics.descent
  let titleRun: GlyphRun | null = null
  const titleEmoji: PlacedEmoji[] = []
  if (title) {
    const room = w - 2 * E.titleMargin
    let text = title
    if (shapeLabel(fonts, text).width * E.titleSize > room) {
      while (text.length > 1 && shapeLabel(fonts, text + '…').width * E.titleSize > room) text = [...text].slice(0, -1).join('')
      text = text.trimEnd() + '…'
    }
    const fitted = shapeLabel(fonts, text)
    const middle = y + E.controlsY
    const baseline = middle + ((ascent + descent) / 2) * E.titleSize
    const left = x + (w - fitted.width * E.titleSize) / 2
    titleRun = { glyphs: fitted.glyphs, x: left, baseline, size: E.titleSize, color: theme.light ? '#121212' : '#ffffff', opacity: 1 }
    chrome.push(chromeGlyphs.draw(titleRun))
    titleEmoji.push(...labelEmoji(fonts, fitted, left, middle, E.titleSize))
  }

  const codeX = x + E.left + gutter
  const emoji: PlacedEmoji[] = []
  const runs: GlyphRun[] = []
  rows.forEach((row, r) => {
    const lineTop = y + top + r * lineHeight
    const baseline = lineTop + lineHeight / 2 + ((ascent + descent) / 2) * fs
    if (look.lineNumbers && row.first) {
      const number = fonts.shape(String(look.firstLineNumber + row.line - 1))
      runs.push({ glyphs: number.glyphs, x: codeX - E.gutterGap - number.width * fs, baseline, size: fs, color: palette.comment, opacity: 1 })
    }
    const placed = placeRow(fonts, row, palette)
    for (const e of placed.emoji) emoji.push(emojiBox(fonts, e.cluster, codeX, e.x, lineTop, lineHeight, fs))
    if (placed.glyphs.length) runs.push({ glyphs: placed.glyphs, x: codeX, baseline, size: fs, color: palette.foreground, opacity: 1 })
  })

  const label = look.title ? `<title>${escapeXml(look.title)}</title>` : ''
  const open = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${W} ${H}">`
  /** Window, chrome, glyphs and emoji, as one SVG (after `extraDefs`). */
  const frontOf = (extraDefs: string, backdrop: string) => {
    const glyphs = new GlyphWriter(fonts)
    // The title's glyphs first, as the chrome drew them.
    if (titleRun) glyphs.draw(titleRun)
    const drawn = runs.map((run) => glyphs.draw(run)).join('')
    return `<defs>${extraDefs}${glyphs.defs()}</defs>${backdrop}${windowRect}${chrome.join('')}${emojiMarkup(titleEmoji, 'te')}${drawn}${emojiMarkup(emoji)}`
  }
  const svg = open + label + frontOf(defs.join(''), back.join('')) + '</svg>'
  const front = open + frontOf('', '') + '</svg>'
  const chromeSvg = (view: { x: number; y: number; w: number; h: number }, pxWidth: number, pxHeight: number) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pxWidth}" height="${pxHeight}" viewBox="${view.x} ${view.y} ${view.w} ${view.h}">` +
    `<defs>${chromeGlyphs.defs()}</defs>${chrome.join('')}${emojiMarkup(titleEmoji, 'te', view)}</svg>`
  const shadow = look.dropShadow ? { offsetY: look.dropShadow.offsetY, sigma: look.dropShadow.blur / 2, alpha: parseColor(E.shadowColor).a } : null
  return {
    width,
    height,
    svg,
    layers: {
      scale,
      W,
      H,
      background: backdrop,
      window: { x, y, w, h, r: radius, fill: parseColor(theme.background), header: top },
      shadow,
      front,
      chrome: chromeSvg,
      runs,
      emoji,
    },
  }
}
