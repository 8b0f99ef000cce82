/**
 * The raster compositor for images with the background on (the default): it paints the scene
 * of scene.ts straight into an RGB buffer, in the SVG's painting order, instead of handing
 * resvg a 3.6-megapixel SVG. Measured on a 40-line 2x render, resvg spent ~17 ms on the
 * gradient, ~11 ms on the shadow, ~6 ms on the translucent window, ~10 ms on an empty
 * canvas the window's size and ~13 ms on 1,600 glyphs; here:
 *
 * 1. Gradient: along a row, a linear gradient's colour changes by the same step per pixel, so
 *    every row is a slice of one precomputed ramp (a memcpy per row), shifted by the row's offset
 *    (rounded to the nearest pixel: under a hundredth of a colour level).
 * 2. Window: its translucent fill over a linear gradient is itself a linear gradient, so its inside
 *    is a slice of a second ramp. The shadow (gradient strips and corners, see scene.ts) and
 *    the window's rounded corners are computed per pixel only in the ring around the window's
 *    edge, from the distance to the rounded rectangle, with the SVG's own stops.
 * 3. Chrome (border, controls, title): resvg draws the scene's chrome SVG, but only over four
 *    thin tiles (the title bar, the bottom edge and the two side edges), not the whole window.
 * 4. Highlight bands: rectangles, with partial coverage on fractional rows.
 * 5. Glyphs: each glyph is rasterised once by resvg as a coverage mask (per font, glyph, size and
 *    sub-pixel position, so the mask is exactly what resvg draws in place), kept in an LRU
 *    atlas, and blended in its colour.
 *
 * Everything is straight (not premultiplied) RGB: with the background on every pixel is opaque.
 */
import { createHash } from 'node:crypto'
import { Resvg } from '@resvg/resvg-js'
import { EmojiAtlas } from './emoji.js'
import type { FontStack } from './fonts.js'
import { parseColor, runOrigin, WINDOW, type Box, type Layers, type Rgba, type ShadowStop } from './scene.js'

/** Linear interpolation over the fade's stops (the first stop's opacity before it, 0 after the last). */
function fade(stops: ShadowStop[], t: number): number {
  if (t <= stops[0].offset) return stops[0].opacity
  for (let i = 1; i < stops.length; i++) {
    const b = stops[i]
    if (t <= b.offset) {
      const a = stops[i - 1]
      return a.opacity + ((b.opacity - a.opacity) * (t - a.offset)) / (b.offset - a.offset)
    }
  }
  return stops[stops.length - 1].opacity
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x)

/**
 * Paints the scene (background on) into an RGB buffer of `width`×`height` device pixels.
 * `atlas` keeps glyph masks from one render to the next; `canvas`, a buffer to paint into (its
 * first width·height·3 bytes), saves allocating one per render.
 */
export function compose(layers: Layers, width: number, height: number, atlas: GlyphAtlas, canvas?: Buffer, backdrops?: BackdropCache): Buffer {
  if (!layers.gradient || !layers.shadow) throw new Error('compose() draws images with the background on')
  const size = width * height * 3
  // Every byte is painted below, so a buffer of an earlier render can be reused as it is.
  const out = canvas && canvas.length >= size ? canvas.subarray(0, size) : Buffer.allocUnsafe(size)
  const key = backdrops ? backdropKey(layers, width, height) : null
  if (!key || !backdrops!.restore(key, out)) {
    paintBackdrop(out, width, height, layers)
    for (const tile of chromeTiles(layers, width, height)) paintChrome(out, width, layers, tile)
    if (key) backdrops!.offer(key, out)
  }
  for (const band of layers.bands) paintBand(out, width, height, layers.scale, band, band.fill)
  atlas.paint(out, width, height, layers)
  if (layers.emoji.length) atlas.emoji.paint(out, width, height, layers.scale, layers.emoji)
  return out
}

/**
 * What a backdrop is drawn from, hashed: sizes, window, gradient, shadow, fill and the chrome's
 * SVG (border, controls, title). Null with a background picture, whose pixels are not in it.
 */
export function backdropKey(layers: Layers, width: number, height: number): string | null {
  if (layers.image) return null
  const { scale, W, H, window, header, gradient, shadow, windowFill } = layers
  return createHash('sha256')
    .update(JSON.stringify([width, height, scale, W, H, window, header, gradient, shadow, windowFill, WINDOW]))
    .update(layers.chrome({ x: 0, y: 0, w: W, h: H }, width, height))
    .digest('base64')
}

/**
 * The backdrops (gradient, shadow, window fill and chrome: everything painted before the code) of
 * recent renders, so that a render of the same size, theme and title copies its backdrop instead of
 * painting it (a memcpy instead of ~14 ms of CPU for a 40-line snippet at 2x). The code's layers
 * are always painted. A backdrop is kept the second time it is asked for within the last
 * `remember` backdrops, so renders of sizes that never come back pay no copy; at most `maxBytes`
 * are kept, least recently used out first.
 */
export class BackdropCache {
  private readonly entries = new Map<string, Buffer>()
  private readonly seen = new Set<string>()
  private bytes = 0

  constructor(
    readonly maxBytes = 32 * 1024 * 1024,
    private readonly remember = 64,
  ) {}

  /** Backdrops kept, and their bytes. */
  get stats() {
    return { entries: this.entries.size, bytes: this.bytes }
  }

  /** Copies the backdrop of `key` into `out`; false when it is not kept. */
  restore(key: string, out: Buffer): boolean {
    const kept = this.entries.get(key)
    if (!kept || kept.length !== out.length) return false
    this.entries.delete(key)
    this.entries.set(key, kept)
    kept.copy(out)
    return true
  }

  /** `out` holds the backdrop of `key`: kept if `key` was asked for recently. */
  offer(key: string, out: Buffer) {
    if (out.length > this.maxBytes) return
    if (!this.seen.delete(key)) {
      this.seen.add(key)
      if (this.seen.size > this.remember) this.seen.delete(this.seen.values().next().value!)
      return
    }
    this.entries.set(key, Buffer.from(out))
    this.bytes += out.length
    for (const [old, pixels] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.entries.delete(old)
      this.bytes -= pixels.length
    }
  }
}

/** Gradient, shadow and window fill, straight from the scene's geometry. */
function paintBackdrop(out: Buffer, width: number, height: number, layers: Layers) {
  const { scale: s, window: win, windowFill: fill } = layers
  const g = layers.gradient!
  const shadow = layers.shadow!
  const from = parseColor(g.from)
  const to = parseColor(g.to)

  // t = tx·X + ty·Y + t0 at the centre of device pixel (X, Y), as resvg evaluates a gradient.
  const gx = g.x2 - g.x1
  const gy = g.y2 - g.y1
  const len2 = gx * gx + gy * gy
  const tx = gx / (s * len2)
  const ty = gy / (s * len2)
  const t0 = ((0.5 / s - g.x1) * gx + (0.5 / s - g.y1) * gy) / len2
  // Row Y is the ramp from index X + shift(Y): the ramp's entry i has t = tx·(i + first).
  // (The gradient runs at 140°, so it always changes along a row: tx is never 0.)
  const rowStart = (Y: number) => Math.round((ty * Y + t0) / tx)
  const first = Math.min(rowStart(0), rowStart(height - 1))
  const rampLength = width + Math.abs(rowStart(height - 1) - rowStart(0)) + 1
  const ramp = Buffer.allocUnsafe(rampLength * 3)
  const inside = Buffer.allocUnsafe(rampLength * 3)
  const color = (t: number, c: 'r' | 'g' | 'b') => from[c] + (to[c] - from[c]) * clamp01(t)
  for (let i = 0; i < rampLength; i++) {
    const t = tx * (i + first)
    for (let c = 0; c < 3; c++) {
      const key = (['r', 'g', 'b'] as const)[c]
      const v = color(t, key)
      ramp[i * 3 + c] = Math.round(v)
      inside[i * 3 + c] = Math.round(v + (fill[key] - v) * fill.a)
    }
  }
  const copyRow = (source: Buffer, Y: number, X0: number, X1: number) => {
    if (X1 <= X0) return
    const shift = rowStart(Y) - first
    source.copy(out, (Y * width + X0) * 3, (X0 + shift) * 3, (X1 + shift) * 3)
  }
  // A background picture: its own pixels, and under the window the fill blended over them.
  const image = layers.image
  const base = image
    ? (Y: number, X0: number, X1: number) => {
        if (X1 > X0) image.copy(out, (Y * width + X0) * 3, (Y * width + X0) * 3, (Y * width + X1) * 3)
      }
    : (Y: number, X0: number, X1: number) => copyRow(ramp, Y, X0, X1)
  const keep = 1 - fill.a
  const fillR = fill.r * fill.a
  const fillG = fill.g * fill.a
  const fillB = fill.b * fill.a
  const insideRow = image
    ? (Y: number, X0: number, X1: number) => {
        for (let i = (Y * width + X0) * 3, end = (Y * width + X1) * 3; i < end; i += 3) {
          out[i] = Math.round(image[i] * keep + fillR)
          out[i + 1] = Math.round(image[i + 1] * keep + fillG)
          out[i + 2] = Math.round(image[i + 2] * keep + fillB)
        }
      }
    : (Y: number, X0: number, X1: number) => copyRow(inside, Y, X0, X1)

  // Device-pixel bounds: the window (edges on whole pixels, since padding, size and scale are whole),
  // its straight middle between the corners, and the ring the shadow reaches.
  const r = WINDOW.radius
  const side = shadow.spread
  const wx0 = win.x * s
  const wx1 = (win.x + win.w) * s
  const wy0 = win.y * s
  const wy1 = (win.y + win.h) * s
  const mx0 = (win.x + r) * s
  const mx1 = (win.x + win.w - r) * s
  const ringX0 = Math.max(0, Math.floor((win.x - side) * s))
  const ringX1 = Math.min(width, Math.ceil((win.x + win.w + side) * s))
  const ringY0 = Math.max(0, Math.floor((win.y - side) * s))
  const ringY1 = Math.min(height, Math.ceil((win.y + win.h + side) * s))
  const stripStops = shadow.stops
  const cornerStops = shadow.cornerStops

  /**
   * What the shadow and the window's fill do to the gradient at pixel (X, Y) outside the straight
   * middle of the window, from the distance to the rounded outline: out = g·mul + fill·cover·alpha.
   */
  const blendEdge = (X: number, Y: number, py: number, dy: number) => {
    const px = (X + 0.5) / s
    const dx = Math.max(win.x + r - px, 0, px - (win.x + win.w - r))
    const corner = dx > 0 && dy > 0
    const rho = corner ? Math.sqrt(dx * dx + dy * dy) : dx + dy
    const d = rho - r
    // How much of the pixel the window covers (whole pixels along its straight edges).
    const cover = corner ? clamp01(0.5 - d * s) : X >= wx0 && X < wx1 && Y >= wy0 && Y < wy1 ? 1 : 0
    const shade = fade(corner ? cornerStops : stripStops, corner ? rho / (r + side) : d / side) * (1 - cover)
    const a = fill.a * cover
    const mul = (1 - shade) * (1 - a)
    const i = (Y * width + X) * 3
    out[i] = Math.round(out[i] * mul + fill.r * a)
    out[i + 1] = Math.round(out[i + 1] * mul + fill.g * a)
    out[i + 2] = Math.round(out[i + 2] * mul + fill.b * a)
  }
  // Between the corners, the sides' shadow depends on the column only.
  const sideY0 = (win.y + r) * s
  const sideY1 = (win.y + win.h - r) * s
  const sideShade = (X: number) => 1 - fade(stripStops, (X < wx0 ? win.x - (X + 0.5) / s : (X + 0.5) / s - win.x - win.w) / side)
  // Multiplying a colour value by a fraction and rounding is done by table: one row of 256 for each
  // side column (the same Math.round as per pixel, looked up instead of computed 3 times a pixel).
  const leftKeep = keepTable(Array.from({ length: Math.max(0, wx0 - ringX0) }, (_, k) => sideShade(ringX0 + k)))
  const rightKeep = keepTable(Array.from({ length: Math.max(0, ringX1 - wx1) }, (_, k) => sideShade(wx1 + k)))
  const leftCount = leftKeep.length >> 8
  const rightCount = rightKeep.length >> 8

  for (let Y = 0; Y < height; Y++) {
    const py = (Y + 0.5) / s
    if (Y >= sideY0 && Y < sideY1) {
      // A row between the corners: gradient, shadow, window (a slice of the inside ramp), shadow, gradient.
      base(Y, 0, wx0)
      insideRow(Y, wx0, wx1)
      base(Y, wx1, width)
      applyKeep(out, (Y * width + ringX0) * 3, leftKeep, leftCount)
      applyKeep(out, (Y * width + wx1) * 3, rightKeep, rightCount)
      continue
    }
    base(Y, 0, width)
    if (Y < ringY0 || Y >= ringY1) continue
    // The straight middle of the row: inside the window, or under a top or bottom strip of shadow.
    if (Y >= wy0 && Y < wy1) insideRow(Y, mx0, mx1)
    else {
      const alpha = fade(stripStops, (Y < wy0 ? win.y - py : py - win.y - win.h) / side)
      if (alpha > 0) darken(out, (Y * width + mx0) * 3, (Y * width + mx1) * 3, keepTable([1 - alpha]))
    }
    // Both ends of the row, per pixel: the corner pieces and the window's rounded corners.
    const dy = Math.max(win.y + r - py, 0, py - (win.y + win.h - r))
    for (let X = ringX0; X < mx0; X++) blendEdge(X, Y, py, dy)
    for (let X = mx1; X < ringX1; X++) blendEdge(X, Y, py, dy)
  }
}

/** For each fraction, the 256 values `Math.round(v × fraction)`. */
function keepTable(keeps: number[]): Uint8Array {
  const table = new Uint8Array(keeps.length * 256)
  for (let k = 0; k < keeps.length; k++) for (let v = 0; v < 256; v++) table[k * 256 + v] = Math.round(v * keeps[k])
  return table
}

/** Scales `count` pixels from byte `start`, the k-th by the k-th fraction of `table`. */
function applyKeep(out: Buffer, start: number, table: Uint8Array, count: number) {
  for (let k = 0, i = start; k < count; k++, i += 3) {
    const row = k << 8
    out[i] = table[row + out[i]]
    out[i + 1] = table[row + out[i + 1]]
    out[i + 2] = table[row + out[i + 2]]
  }
}

function darken(out: Buffer, start: number, end: number, table: Uint8Array) {
  for (let i = start; i < end; i++) out[i] = table[out[i]]
}

/**
 * The parts of the window that hold chrome, in device pixels, one pixel wider than what they
 * hold: the title bar (controls, title, top corners and border), the bottom edge, and the
 * left and right border between them. They do not overlap, so each is blended once.
 */
function chromeTiles(layers: Layers, width: number, height: number): Box[] {
  const { scale: s, window: win } = layers
  const x0 = Math.max(0, (win.x - 1) * s)
  const x1 = Math.min(width, (win.x + win.w + 1) * s)
  const top = Math.max(0, (win.y - 1) * s)
  const barEnd = (win.y + layers.header) * s
  const bottom = (win.y + win.h - WINDOW.bottom) * s
  const end = Math.min(height, (win.y + win.h + 1) * s)
  const edge = 2 * s
  return [
    { x: x0, y: top, w: x1 - x0, h: barEnd - top },
    { x: x0, y: barEnd, w: Math.min(edge, x1 - x0), h: bottom - barEnd },
    { x: Math.max(x0, x1 - edge), y: barEnd, w: Math.min(edge, x1 - x0), h: bottom - barEnd },
    { x: x0, y: bottom, w: x1 - x0, h: end - bottom },
  ].filter((tile) => tile.w > 0 && tile.h > 0)
}

/**
 * Draws the chrome SVG over one tile with resvg and blends it in (resvg's pixels are premultiplied).
 * The tile is drawn with a margin of one CSS px that is not blended: resvg leaves out a hairline's
 * pixels in a pixmap's last column (the 1-px border at scale 1).
 */
export function paintChrome(out: Buffer, width: number, layers: Pick<Layers, 'scale' | 'chrome'>, tile: Box) {
  const s = layers.scale
  const m = s
  const w = tile.w + 2 * m
  const h = tile.h + 2 * m
  const svg = layers.chrome({ x: tile.x / s - 1, y: tile.y / s - 1, w: w / s, h: h / s }, w, h)
  const pixels = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
  for (let y = 0; y < tile.h; y++) {
    for (let x = 0; x < tile.w; x++) {
      const j = ((y + m) * w + x + m) * 4
      const a = pixels[j + 3]
      if (a === 0) continue
      const i = ((tile.y + y) * width + tile.x + x) * 3
      const keep = (255 - a) / 255
      out[i] = Math.round(pixels[j] + out[i] * keep)
      out[i + 1] = Math.round(pixels[j + 1] + out[i + 1] * keep)
      out[i + 2] = Math.round(pixels[j + 2] + out[i + 2] * keep)
    }
  }
}

/** A rectangle in CSS px, blended with partial coverage where its edges fall inside a device pixel. */
function paintBand(out: Buffer, width: number, height: number, s: number, box: Box, color: Rgba) {
  const x0 = Math.max(0, Math.round(box.x * s))
  const x1 = Math.min(width, Math.round((box.x + box.w) * s))
  const top = box.y * s
  const bottom = (box.y + box.h) * s
  for (let Y = Math.max(0, Math.floor(top)); Y < Math.min(height, Math.ceil(bottom)); Y++) {
    const alpha = color.a * (Math.min(bottom, Y + 1) - Math.max(top, Y))
    for (let i = (Y * width + x0) * 3, end = (Y * width + x1) * 3; i < end; i += 3) {
      out[i] = Math.round(out[i] + (color.r - out[i]) * alpha)
      out[i + 1] = Math.round(out[i + 1] + (color.g - out[i + 1]) * alpha)
      out[i + 2] = Math.round(out[i + 2] + (color.b - out[i + 2]) * alpha)
    }
  }
}

/**
 * A glyph's coverage, `left`/`top` device px from the glyph's whole-pixel origin; only its
 * covered pixels are kept (about a third of the box), as (column, row, coverage).
 */
interface Mask {
  left: number
  top: number
  width: number
  height: number
  columns: Uint16Array
  rows: Uint16Array
  coverage: Uint8Array
}

/** A mask in the atlas: which size and sub-pixel position of its glyph it is, and when it was last drawn. */
interface Entry extends Mask {
  /** The glyph's size in device px (scale × font size): with the font, it sets the px per font unit. */
  px: number
  /** Sub-pixel position in millionths of a px. */
  fx: number
  fy: number
  used: number
  /** Byte offsets of the covered pixels in a canvas `offsetsWidth` px wide (blend() fills them in). */
  offsets?: Int32Array
  offsetsWidth?: number
}

/** A glyph to rasterise: its atlas key and exact placement. */
interface Wanted {
  glyph: number
  font: number
  id: number
  px: number
  k: number
  fx: number
  fy: number
}

/**
 * A glyph's mask is drawn at its exact sub-pixel position (quantising it would move edges across
 * resvg's sub-scanlines); float noise such as 17.999999 still counts as the whole pixel 18.
 */
const EPSILON = 1e-9

/**
 * Glyph coverage masks, rasterised by resvg the first time a glyph is needed at a size and
 * sub-pixel position, all the missing ones of a render in one resvg call, and kept (least
 * recently drawn out first) for later renders. Found by number (font and glyph id), then among
 * that glyph's few sizes and positions: no key string is built or hashed per glyph drawn.
 */
export class GlyphAtlas {
  /** By font × 0x10000 + glyph id: the glyph's masks at each size and sub-pixel position. */
  private readonly glyphs = new Map<number, Entry[]>()
  private count = 0
  /** Paints so far: an entry's `used` is the last paint that drew it. */
  private clock = 0
  /** Emoji bitmaps, kept alongside the glyph masks. */
  readonly emoji = new EmojiAtlas()

  constructor(
    private readonly fonts: FontStack,
    private readonly capacity = 8192,
  ) {}

  get size() {
    return this.count
  }

  private find(glyph: number, px: number, fx: number, fy: number): Entry | undefined {
    const list = this.glyphs.get(glyph)
    if (list) for (const entry of list) if (entry.px === px && entry.fx === fx && entry.fy === fy) return entry
    return undefined
  }

  /** Blends every glyph run of the scene into `out`. */
  paint(out: Buffer, width: number, height: number, layers: Pick<Layers, 'scale' | 'runs'>) {
    const s = layers.scale
    const fonts = this.fonts
    const tick = ++this.clock
    // Each drawn glyph in drawing order: its mask (or, until rasterised, the mask it waits for), whole-pixel origin and colour.
    const masks: Array<Entry | Wanted> = []
    const xs: number[] = []
    const ys: number[] = []
    const colors: Rgba[] = []
    // The masks to rasterise, in the order first needed, each with the last placement asking for it.
    const missing = new Map<string, Wanted>()
    for (const run of layers.runs) {
      const origin = runOrigin(run)
      const px = s * run.size
      const runColors = new Map<string | undefined, Rgba>()
      for (const glyph of run.glyphs) {
        if (fonts.isBlank(glyph.font, glyph.id)) continue
        const upem = fonts.unitsPerEm(glyph.font)
        // Device px per font unit, and the glyph's origin in device px (y down), as the SVG places
        // it (glyphUnits: its offset in whole font units).
        const k = px / upem
        const ox = origin.x * s + k * Math.round(glyph.x * upem)
        const oy = origin.y * s - k * Math.round(glyph.y * upem)
        const X = Math.floor(ox + EPSILON)
        const Y = Math.floor(oy + EPSILON)
        const fx = Math.max(0, ox - X)
        const fy = Math.max(0, oy - Y)
        const key = glyph.font * 0x10000 + glyph.id
        const fxi = Math.round(fx * 1e6)
        const fyi = Math.round(fy * 1e6)
        let mask: Entry | Wanted | undefined = this.find(key, px, fxi, fyi)
        if (mask) mask.used = tick
        else {
          const name = `${key}:${px}:${fxi}:${fyi}`
          const wanted = { glyph: key, font: glyph.font, id: glyph.id, px, k, fx, fy }
          mask = missing.get(name) ?? wanted
          // The last placement's exact position, as before: they differ by under a millionth of a px.
          Object.assign(mask, { k, fx, fy })
          missing.set(name, mask as Wanted)
        }
        let color = runColors.get(glyph.color)
        if (!color) runColors.set(glyph.color, (color = parseColor(glyph.color ?? run.color ?? '#000', run.opacity)))
        masks.push(mask)
        xs.push(X)
        ys.push(Y)
        colors.push(color)
      }
    }
    const made = this.rasterise([...missing.values()], tick)
    for (let g = 0; g < masks.length; g++) {
      const mask = made.get(masks[g]) ?? (masks[g] as Entry)
      blend(out, width, height, mask, xs[g] + mask.left, ys[g] + mask.top, colors[g])
    }
    if (this.count > this.capacity) this.evict()
  }

  /** Drops the least recently drawn masks down to the capacity. */
  private evict() {
    const all: Array<[number, Entry]> = []
    for (const [glyph, list] of this.glyphs) for (const entry of list) all.push([glyph, entry])
    all.sort((a, b) => a[1].used - b[1].used)
    for (const [glyph, entry] of all.slice(0, this.count - this.capacity)) {
      const list = this.glyphs.get(glyph)!.filter((e) => e !== entry)
      if (list.length) this.glyphs.set(glyph, list)
      else this.glyphs.delete(glyph)
      this.count--
    }
  }

  /**
   * Renders the given glyphs' masks with one resvg call (white glyphs on shelves of a transparent
   * sheet) and files them in the atlas; answers each one's entry.
   */
  private rasterise(unique: Wanted[], tick: number): Map<Entry | Wanted, Entry> {
    const made = new Map<Entry | Wanted, Entry>()
    if (unique.length === 0) return made
    const SHEET = 1024
    let x = 0
    let y = 0
    let shelf = 0
    let paths = ''
    const cells: Array<{ wanted: Wanted; x: number; y: number; mask: Pick<Mask, 'left' | 'top' | 'width' | 'height'> }> = []
    for (const m of unique) {
      const box = this.fonts.fonts[m.font].getGlyph(m.id).path.bbox
      // One spare pixel on each side of the outline's box, for anti-aliasing.
      const left = Math.floor(m.fx + m.k * box.minX) - 1
      const top = Math.floor(m.fy - m.k * box.maxY) - 1
      const w = Math.ceil(m.fx + m.k * box.maxX) + 1 - left
      const h = Math.ceil(m.fy - m.k * box.minY) + 1 - top
      if (x + w > SHEET) {
        x = 0
        y += shelf
        shelf = 0
      }
      cells.push({ wanted: m, x, y, mask: { left, top, width: w, height: h } })
      paths += `<path transform="translate(${x - left + m.fx} ${y - top + m.fy}) scale(${m.k} ${-m.k})" d="${this.fonts.glyphPath(m.font, m.id)}"/>`
      x += w
      shelf = Math.max(shelf, h)
    }
    const sheetHeight = y + shelf
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SHEET}" height="${sheetHeight}"><g fill="#fff">${paths}</g></svg>`
    const pixels = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
    for (const cell of cells) {
      const { width: w, height: h } = cell.mask
      const columns: number[] = []
      const rows: number[] = []
      const coverage: number[] = []
      for (let j = 0; j < h; j++) {
        for (let i = 0; i < w; i++) {
          const a = pixels[((cell.y + j) * SHEET + cell.x + i) * 4 + 3]
          if (a === 0) continue
          columns.push(i)
          rows.push(j)
          coverage.push(a)
        }
      }
      const m = cell.wanted
      const entry: Entry = {
        ...cell.mask,
        columns: Uint16Array.from(columns),
        rows: Uint16Array.from(rows),
        coverage: Uint8Array.from(coverage),
        px: m.px,
        fx: Math.round(m.fx * 1e6),
        fy: Math.round(m.fy * 1e6),
        used: tick,
      }
      const list = this.glyphs.get(m.glyph)
      if (list) list.push(entry)
      else this.glyphs.set(m.glyph, [entry])
      this.count++
      made.set(m, entry)
    }
    return made
  }
}

/** Source-over of a coverage mask in one colour (its alpha times the coverage). */
function blend(out: Buffer, width: number, height: number, mask: Entry, X0: number, Y0: number, color: Rgba) {
  const r = color.r
  const g = color.g
  const b = color.b
  const opacity = color.a / 255
  const { columns, rows, coverage } = mask
  const n = coverage.length
  if (X0 < 0 || Y0 < 0 || X0 + mask.width > width || Y0 + mask.height > height) {
    // Partly outside the canvas: pixel by pixel, with bounds.
    for (let k = 0; k < n; k++) {
      const X = X0 + columns[k]
      const Y = Y0 + rows[k]
      if (X < 0 || Y < 0 || X >= width || Y >= height) continue
      blendPixel(out, (Y * width + X) * 3, coverage[k] * opacity, r, g, b)
    }
    return
  }
  // Inside: the mask's byte offsets for this canvas width, computed once per width.
  if (mask.offsetsWidth !== width) {
    const offsets = new Int32Array(n)
    for (let k = 0; k < n; k++) offsets[k] = (rows[k] * width + columns[k]) * 3
    mask.offsets = offsets
    mask.offsetsWidth = width
  }
  const offsets = mask.offsets!
  const origin = (Y0 * width + X0) * 3
  if (opacity === 1 / 255) {
    // Opaque colour: fully covered pixels take it as it is (what the blend gives for a = 1).
    for (let k = 0; k < n; k++) {
      const o = origin + offsets[k]
      const c = coverage[k]
      if (c === 255) {
        out[o] = r
        out[o + 1] = g
        out[o + 2] = b
      } else blendPixel(out, o, c * opacity, r, g, b)
    }
    return
  }
  for (let k = 0; k < n; k++) blendPixel(out, origin + offsets[k], coverage[k] * opacity, r, g, b)
}

function blendPixel(out: Buffer, o: number, a: number, r: number, g: number, b: number) {
  const o0 = out[o]
  const o1 = out[o + 1]
  const o2 = out[o + 2]
  out[o] = Math.round(o0 + (r - o0) * a)
  out[o + 1] = Math.round(o1 + (g - o1) * a)
  out[o + 2] = Math.round(o2 + (b - o2) * a)
}
