/**
 * The carbon compositor. resvg's Gaussian blur of carbon's large drop shadow (68 px by default)
 * took ~85% of a render, and filling the window took resvg as long again as the glyphs, so:
 *
 * 1. Background: one colour.
 * 2. Shadow: a blurred rectangle is separable, so its coverage at (x, y) is the product of two
 *    1-D terms, ½(erf((x − x0)/σ√2) − erf((x − x1)/σ√2)) and the same in y, one array per axis
 *    (the 5-px corner radius is far below the blur and is ignored). As in CSS, it is not drawn
 *    under the window; rows and columns where it fades below half a level are skipped.
 * 3. Opaque backgrounds (the default), straight into RGB like the ray.so compositor (../compose.ts):
 *    the window's fill (a constant over a constant background), its rounded corners per pixel
 *    from the distance to the corner's centre; resvg draws the chrome (controls, title, the `bw`
 *    border) over thin tiles only; glyphs come from the renderer's glyph atlas and emoji from its
 *    emoji bitmaps.
 * 4. Translucent or transparent backgrounds, in premultiplied RGBA: resvg draws everything in
 *    front of the shadow (window, chrome, glyphs, emoji) on a transparent canvas, blended over.
 *
 * `test/maker/carbon.test.ts` checks both against resvg drawing the whole SVG with its own blur.
 */
import { Resvg } from '@resvg/resvg-js'
import sharp from 'sharp'
import { paintChrome, type GlyphAtlas } from '../compose.js'
import type { Box } from '../scene.js'
import type { CarbonLayers } from './scene.js'

/** erf, Abramowitz and Stegun 7.1.26 (error under 1.5e-7). */
function erf(x: number): number {
  const sign = x < 0 ? -1 : 1
  const t = 1 / (1 + 0.3275911 * Math.abs(x))
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x)
  return sign * y
}

/** Coverage along one axis of a box [from, to] blurred with sigma, at the centres of `count` device pixels. */
function axis(count: number, scale: number, from: number, to: number, sigma: number): Float64Array {
  const out = new Float64Array(count)
  const k = 1 / (sigma * Math.SQRT2)
  for (let i = 0; i < count; i++) {
    const p = (i + 0.5) / scale
    out[i] = sigma > 0 ? 0.5 * (erf((p - from) * k) - erf((p - to) * k)) : p >= from && p < to ? 1 : 0
  }
  return out
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x)

/** How much of device pixel (X, Y) the window's rounded rectangle covers: 0 or 1 off the corners, anti-aliased on them. */
function coverage(win: CarbonLayers['window'], s: number, X: number, Y: number): number {
  const px = (X + 0.5) / s
  const py = (Y + 0.5) / s
  if (px < win.x || px >= win.x + win.w || py < win.y || py >= win.y + win.h) return 0
  const r = win.r
  if (r <= 0) return 1
  const dx = Math.max(win.x + r - px, 0, px - (win.x + win.w - r))
  const dy = Math.max(win.y + r - py, 0, py - (win.y + win.h - r))
  if (dx === 0 || dy === 0) return 1
  return clamp01(0.5 - (Math.sqrt(dx * dx + dy * dy) - r) * s)
}

/**
 * Darkens `out` (`channels` per pixel, premultiplied when 4) by the shadow, outside the window:
 * pixels the window covers wholly are skipped, its anti-aliased corner pixels get the uncovered share.
 */
function paintShadow(out: Buffer, channels: 3 | 4, width: number, height: number, layers: CarbonLayers) {
  const { scale: s, window: win, shadow } = layers
  if (!shadow || shadow.alpha <= 0) return
  const sx = axis(width, s, win.x, win.x + win.w, shadow.sigma)
  const sy = axis(height, s, win.y + shadow.offsetY, win.y + shadow.offsetY + win.h, shadow.sigma)
  const threshold = 0.5 / 255
  const wx0 = win.x * s
  const wx1 = (win.x + win.w) * s
  const wy0 = win.y * s
  const wy1 = (win.y + win.h) * s
  // Columns within the corner radius, where the window's cover is partial.
  const rx0 = wx0 + Math.ceil(win.r * s)
  const rx1 = wx1 - Math.ceil(win.r * s)
  const shade = (X: number, Y: number, ay: number) => {
    let alpha = ay * sx[X]
    if (alpha < threshold) return
    if (Y >= wy0 && Y < wy1 && X >= wx0 && X < wx1) alpha *= 1 - coverage(win, s, X, Y)
    const keep = 1 - alpha
    const i = (Y * width + X) * channels
    out[i] = Math.round(out[i] * keep)
    out[i + 1] = Math.round(out[i + 1] * keep)
    out[i + 2] = Math.round(out[i + 2] * keep)
    if (channels === 4) out[i + 3] = Math.round(255 * alpha + out[i + 3] * keep)
  }
  for (let Y = 0; Y < height; Y++) {
    const ay = sy[Y] * shadow.alpha
    if (ay < threshold) continue
    if (Y < wy0 || Y >= wy1) {
      for (let X = 0; X < width; X++) shade(X, Y, ay)
      continue
    }
    // A row across the window: only the parts beside it, and its corner columns.
    for (let X = 0; X < Math.min(rx0, width); X++) shade(X, Y, ay)
    for (let X = Math.max(rx1, 0); X < width; X++) shade(X, Y, ay)
  }
}

/** The chrome's tiles in device px: the bar (controls, title, top border), and for `bw` the border's sides and bottom. */
function chromeTiles(layers: CarbonLayers, width: number, height: number, border: boolean): Box[] {
  const { scale: s, window: win } = layers
  const x0 = Math.max(0, (win.x - 1) * s)
  const x1 = Math.min(width, (win.x + win.w + 1) * s)
  const top = Math.max(0, (win.y - 1) * s)
  const barEnd = Math.min(height, (win.y + win.header) * s)
  const end = Math.min(height, (win.y + win.h + 1) * s)
  const tiles: Box[] = [{ x: x0, y: top, w: x1 - x0, h: barEnd - top }]
  if (border) {
    const edge = 4 * s
    const bottom = Math.max(barEnd, (win.y + win.h - 3) * s)
    tiles.push(
      { x: x0, y: barEnd, w: Math.min(edge, x1 - x0), h: bottom - barEnd },
      { x: Math.max(x0, x1 - edge), y: barEnd, w: Math.min(edge, x1 - x0), h: bottom - barEnd },
      { x: x0, y: bottom, w: x1 - x0, h: end - bottom },
    )
  }
  return tiles.filter((tile) => tile.w > 0 && tile.h > 0)
}

/** Opaque backgrounds: the whole image in RGB (see the module's comment, step 3). */
export function composeCarbonRgb(layers: CarbonLayers, width: number, height: number, atlas: GlyphAtlas, border: boolean, chrome: boolean): Buffer {
  const { scale: s, background: bg, window: win } = layers
  if (bg.a < 1) throw new Error('composeCarbonRgb() draws opaque backgrounds')
  const out = Buffer.allocUnsafe(width * height * 3)
  out.fill(Buffer.from([bg.r, bg.g, bg.b]))
  paintShadow(out, 3, width, height, layers)

  // The window over the plain background is one colour; its corners are blended over the shadow.
  const f = win.fill
  const inside = [0, 1, 2].map((c) => Math.round([bg.r, bg.g, bg.b][c] * (1 - f.a) + [f.r, f.g, f.b][c] * f.a))
  const row = Buffer.alloc((win.w * s) * 3)
  for (let i = 0; i < row.length; i += 3) row.set(inside, i)
  const wx0 = win.x * s
  const wx1 = (win.x + win.w) * s
  const rr = Math.ceil(win.r * s)
  for (let Y = Math.max(0, win.y * s); Y < Math.min(height, (win.y + win.h) * s); Y++) {
    const py = (Y + 0.5) / s
    const cornerRow = win.r > 0 && (py < win.y + win.r || py > win.y + win.h - win.r)
    if (!cornerRow) {
      row.copy(out, (Y * width + wx0) * 3)
      continue
    }
    row.copy(out, (Y * width + wx0 + rr) * 3, rr * 3, (wx1 - wx0 - rr) * 3)
    for (let k = 0; k < rr; k++) {
      for (const X of [wx0 + k, wx1 - 1 - k]) {
        const cover = coverage(win, s, X, Y)
        if (cover <= 0) continue
        const i = (Y * width + X) * 3
        for (let c = 0; c < 3; c++) out[i + c] = Math.round(out[i + c] + (inside[c] - out[i + c]) * cover)
      }
    }
  }
  if (chrome) for (const tile of chromeTiles(layers, width, height, border)) paintChrome(out, width, layers, tile)
  atlas.paint(out, width, height, layers)
  if (layers.emoji.length) atlas.emoji.paint(out, width, height, s, layers.emoji)
  return out
}

/** Translucent or transparent backgrounds: premultiplied RGBA (see the module's comment, step 4). */
export function composeCarbon(layers: CarbonLayers, width: number, height: number): Buffer {
  const { background: bg } = layers
  const out = Buffer.allocUnsafe(width * height * 4)
  const a = bg.a
  out.fill(Buffer.from([Math.round(bg.r * a), Math.round(bg.g * a), Math.round(bg.b * a), Math.round(255 * a)]))
  paintShadow(out, 4, width, height, layers)

  const pixels = new Resvg(layers.front, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().pixels
  for (let i = 0; i < pixels.length; i += 4) {
    const fa = pixels[i + 3]
    if (fa === 0) continue
    if (fa === 255) {
      out[i] = pixels[i]
      out[i + 1] = pixels[i + 1]
      out[i + 2] = pixels[i + 2]
      out[i + 3] = 255
      continue
    }
    const keep = (255 - fa) / 255
    out[i] = Math.round(pixels[i] + out[i] * keep)
    out[i + 1] = Math.round(pixels[i + 1] + out[i + 1] * keep)
    out[i + 2] = Math.round(pixels[i + 2] + out[i + 2] * keep)
    out[i + 3] = Math.round(fa + out[i + 3] * keep)
  }
  return out
}

/** PNG of the RGB composite (zlib level 1, as the ray.so compositor's). */
export function encodeRgb(rgb: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(rgb, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer()
}

/** PNG of the premultiplied RGBA composite: un-premultiplied, 4 channels. */
export function encodeRgba(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  for (let i = 0; i < rgba.length; i += 4) {
    const a = rgba[i + 3]
    if (a === 0 || a === 255) continue
    rgba[i] = Math.min(255, Math.round((rgba[i] * 255) / a))
    rgba[i + 1] = Math.min(255, Math.round((rgba[i + 1] * 255) / a))
    rgba[i + 2] = Math.min(255, Math.round((rgba[i + 2] * 255) / a))
  }
  return sharp(rgba, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 1 }).toBuffer()
}
