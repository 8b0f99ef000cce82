/**
 * The carbon compositor: resvg's Gaussian blur of carbon's large drop shadow (68 px by default)
 * took ~85% of a render, so the backdrop is painted here and resvg draws only what is in front:
 *
 * 1. Background: one colour, straight into a premultiplied RGBA buffer.
 * 2. Shadow: a blurred rectangle is separable, so its coverage at (x, y) is the product of two
 *    1-D terms, ½(erf((x − x0)/σ√2) − erf((x − x1)/σ√2)) and the same in y, one array per axis
 *    (the 5-px corner radius is far below the blur and is ignored). As in CSS, it is not drawn
 *    under the window.
 * 3. Front (window, controls, title, code, emoji): resvg on a transparent canvas, blended over.
 *
 * The PNG is RGB when every pixel is opaque, RGBA (un-premultiplied) otherwise.
 */
import { Resvg } from '@resvg/resvg-js'
import sharp from 'sharp'
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

/** Whether the centre of device pixel (X, Y) is inside the window's rounded rectangle. */
function insideWindow(win: CarbonLayers['window'], px: number, py: number): boolean {
  if (px < win.x || px >= win.x + win.w || py < win.y || py >= win.y + win.h) return false
  const r = win.r
  if (r <= 0) return true
  const dx = Math.max(win.x + r - px, 0, px - (win.x + win.w - r))
  const dy = Math.max(win.y + r - py, 0, py - (win.y + win.h - r))
  return dx * dx + dy * dy <= r * r
}

/** Paints the layers into premultiplied RGBA, `width`×`height` device px. */
export function composeCarbon(layers: CarbonLayers, width: number, height: number): Buffer {
  const { scale: s, background: bg, window: win, shadow } = layers
  const out = Buffer.allocUnsafe(width * height * 4)
  const a = bg.a
  const fill = [Math.round(bg.r * a), Math.round(bg.g * a), Math.round(bg.b * a), Math.round(255 * a)]
  const pattern = Buffer.from(fill)
  out.fill(pattern)

  if (shadow && shadow.alpha > 0) {
    const sx = axis(width, s, win.x, win.x + win.w, shadow.sigma)
    const sy = axis(height, s, win.y + shadow.offsetY, win.y + shadow.offsetY + win.h, shadow.sigma)
    // Rows and columns beyond where the shadow fades below half a level are skipped.
    const threshold = 0.5 / 255
    for (let Y = 0; Y < height; Y++) {
      const ay = sy[Y] * shadow.alpha
      if (ay < threshold) continue
      const py = (Y + 0.5) / s
      for (let X = 0; X < width; X++) {
        const alpha = ay * sx[X]
        if (alpha < threshold) continue
        if (insideWindow(win, (X + 0.5) / s, py)) continue
        const keep = 1 - alpha
        const i = (Y * width + X) * 4
        out[i] = Math.round(out[i] * keep)
        out[i + 1] = Math.round(out[i + 1] * keep)
        out[i + 2] = Math.round(out[i + 2] * keep)
        out[i + 3] = Math.round(255 * alpha + out[i + 3] * keep)
      }
    }
  }

  const front = new Resvg(layers.front, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render()
  const pixels = front.pixels
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

/** The composed image as a PNG: 3 channels when opaque, else straight (un-premultiplied) RGBA. */
export async function encodeCarbon(rgba: Buffer, width: number, height: number): Promise<Buffer> {
  let opaque = true
  for (let i = 3; i < rgba.length; i += 4) {
    if (rgba[i] !== 255) {
      opaque = false
      break
    }
  }
  if (opaque) {
    const rgb = Buffer.allocUnsafe(width * height * 3)
    for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
      rgb[j] = rgba[i]
      rgb[j + 1] = rgba[i + 1]
      rgb[j + 2] = rgba[i + 2]
    }
    return sharp(rgb, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer()
  }
  for (let i = 0; i < rgba.length; i += 4) {
    const a = rgba[i + 3]
    if (a === 0 || a === 255) continue
    rgba[i] = Math.min(255, Math.round((rgba[i] * 255) / a))
    rgba[i + 1] = Math.min(255, Math.round((rgba[i + 1] * 255) / a))
    rgba[i + 2] = Math.min(255, Math.round((rgba[i + 2] * 255) / a))
  }
  return sharp(rgba, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 1 }).toBuffer()
}
