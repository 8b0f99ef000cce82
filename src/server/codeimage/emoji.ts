/**
 * Emoji in code images: each emoji cluster (src/server/render/emoji.ts) takes two monospace cells,
 * as in a terminal, and is drawn from Twemoji's SVG, one em square centred in the two cells.
 *
 * - The SVG answer (and transparent PNGs) inline each emoji's content as a nested
 *   `<svg x y width height viewBox>`: never `<use>`/`<symbol>` (resvg 2.6.2 aborts the process on them).
 * - The compositor (compose.ts) rasterises each emoji once per device size with resvg, keeps it in
 *   a small LRU, and blends it in at whole device pixels (emoji positions are whole CSS px).
 */
import { Resvg } from '@resvg/resvg-js'
import { emojiSvg } from '../render/emoji.js'

/** One emoji drawn in the scene: its cluster and its square, top-left corner and size in CSS px. */
export interface PlacedEmoji {
  cluster: string
  x: number
  y: number
  size: number
}

/** Columns an emoji takes, as terminals give wide characters. */
export const EMOJI_CELLS = 2

interface Parsed {
  viewBox: string
  body: string
}

const parsed = new Map<string, Parsed | null>()

/** Twemoji's drawing of a cluster split into its viewBox and content; null when Twemoji has none. */
function parse(cluster: string): Parsed | null {
  let entry = parsed.get(cluster)
  if (entry !== undefined) return entry
  const svg = emojiSvg(cluster)
  entry = null
  if (svg) {
    const open = /^\s*<svg\b([^>]*)>/.exec(svg)
    const close = svg.lastIndexOf('</svg>')
    if (open && close > open[0].length) {
      const viewBox = /viewBox="([^"]+)"/.exec(open[1])?.[1] ?? '0 0 36 36'
      entry = { viewBox, body: svg.slice(open[0].length, close) }
    }
  }
  if (parsed.size >= 512) parsed.delete(parsed.keys().next().value!)
  parsed.set(cluster, entry)
  return entry
}

/** Whether the cluster can be drawn as a colour emoji (else it stays text, drawn by the fonts). */
export function drawableEmoji(cluster: string): boolean {
  return parse(cluster) !== null
}

/**
 * The emoji as nested `<svg>` elements. Ids inside an emoji (a few Twemoji files have a clipPath)
 * get a per-placement prefix, so two emoji never share one.
 *
 * resvg 2.6.2 aborts the whole process (a Rust panic in geom.rs) on a nested `<svg>`, or on
 * clipped content, that lies wholly outside the area it draws: an SVG drawn through a smaller
 * viewBox (the compositor's chrome tiles) must pass that `view`, and emoji outside it are left out.
 */
export function emojiMarkup(placed: readonly PlacedEmoji[], idPrefix = 'em', view?: { x: number; y: number; w: number; h: number }): string {
  let out = ''
  placed.forEach((e, i) => {
    const drawing = parse(e.cluster)
    if (!drawing) return
    if (view && (e.x >= view.x + view.w || e.x + e.size <= view.x || e.y >= view.y + view.h || e.y + e.size <= view.y)) return
    const prefix = `${idPrefix}${i}-`
    const body = drawing.body.replace(/\bid="([^"]+)"/g, `id="${prefix}$1"`).replace(/url\(#([^)]+)\)/g, `url(#${prefix}$1)`)
    out += `<svg x="${e.x}" y="${e.y}" width="${e.size}" height="${e.size}" viewBox="${drawing.viewBox}">${body}</svg>`
  })
  return out
}

/** An emoji rasterised at one device size: premultiplied RGBA, `size`×`size`. */
interface Bitmap {
  size: number
  pixels: Uint8Array
}

/** Emoji bitmaps per cluster and device size, least recently used out first. */
export class EmojiAtlas {
  private readonly bitmaps = new Map<string, Bitmap>()

  constructor(private readonly capacity = 256) {}

  get size() {
    return this.bitmaps.size
  }

  /** Blends the emoji (CSS px, times `scale`) into an RGB buffer. */
  paint(out: Buffer, width: number, height: number, scale: number, placed: readonly PlacedEmoji[]) {
    for (const e of placed) {
      const bitmap = this.bitmap(e.cluster, Math.round(e.size * scale))
      if (bitmap) blendRgba(out, width, height, bitmap, Math.round(e.x * scale), Math.round(e.y * scale))
    }
  }

  private bitmap(cluster: string, size: number): Bitmap | null {
    const key = `${cluster}:${size}`
    let bitmap = this.bitmaps.get(key)
    if (bitmap) {
      this.bitmaps.delete(key)
      this.bitmaps.set(key, bitmap)
      return bitmap
    }
    const markup = emojiMarkup([{ cluster, x: 0, y: 0, size }])
    if (!markup || size <= 0) return null
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}">${markup}</svg>`
    const pixels = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
    bitmap = { size, pixels: new Uint8Array(pixels.buffer, pixels.byteOffset, pixels.byteLength) }
    this.bitmaps.set(key, bitmap)
    if (this.bitmaps.size > this.capacity) this.bitmaps.delete(this.bitmaps.keys().next().value!)
    return bitmap
  }
}

/** Source-over of premultiplied RGBA onto straight RGB. */
function blendRgba(out: Buffer, width: number, height: number, bitmap: Bitmap, X0: number, Y0: number) {
  const { size, pixels } = bitmap
  for (let y = 0; y < size; y++) {
    const Y = Y0 + y
    if (Y < 0 || Y >= height) continue
    for (let x = 0; x < size; x++) {
      const X = X0 + x
      if (X < 0 || X >= width) continue
      const j = (y * size + x) * 4
      const a = pixels[j + 3]
      if (a === 0) continue
      const i = (Y * width + X) * 3
      const keep = (255 - a) / 255
      out[i] = Math.round(pixels[j] + out[i] * keep)
      out[i + 1] = Math.round(pixels[j + 1] + out[i + 1] * keep)
      out[i + 2] = Math.round(pixels[j + 2] + out[i + 2] * keep)
    }
  }
}
