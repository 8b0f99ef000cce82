/**
 * The fonts of a code image, loaded once per renderer: JetBrains Mono (ray.so's default), then
 * DejaVu Sans Mono for symbols, box drawing, Greek and Cyrillic, then Noto Sans Hans (GB 2312:
 * Chinese, kana) for CJK. All ship as TTF/OTF inside npm packages, so rendering works offline.
 *
 * Glyphs become SVG paths (fontkit shapes each run, ligatures included), so resvg needs no
 * font of its own and an SVG answer looks the same in every viewer.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import * as fontkit from 'fontkit'

const require = createRequire(import.meta.url)

/** Where each font of the stack lives, in fallback order. */
export function fontFiles(): string[] {
  const cjkPackage = path.dirname(path.dirname(require.resolve('@embedpdf/fonts-sc')))
  return [
    require.resolve('@expo-google-fonts/jetbrains-mono/400Regular/JetBrainsMono_400Regular.ttf'),
    require.resolve('dejavu-fonts-ttf/ttf/DejaVuSansMono.ttf'),
    path.join(cjkPackage, 'fonts', 'NotoSansHans-Regular.otf'),
  ]
}

/** One glyph placed on a line: `x` in em from the line's start. */
export interface PlacedGlyph {
  font: number
  id: number
  x: number
  y: number
}

export interface Shaped {
  glyphs: PlacedGlyph[]
  /** Advance of the whole text, in em. */
  width: number
}

/**
 * fontkit 2.0.4 reads past the glyf table for an empty last glyph (JetBrains Mono's `SPC`,
 * which its ligatures use), so an empty glyph's box is answered without reading it.
 */
function guardEmptyGlyphs(font: fontkit.Font) {
  const proto = Object.getPrototypeOf(font.getGlyph(0)) as Record<string, unknown>
  if (typeof proto._getCBox !== 'function' || proto.__emptyGuard) return
  const original = proto._getCBox as (this: any, internal: boolean) => unknown
  const Box = (font.bbox as object).constructor as new (a: number, b: number, c: number, d: number) => unknown
  proto._getCBox = function (this: any, internal: boolean) {
    const offsets = this._font.loca?.offsets as number[] | undefined
    if (offsets && offsets[this.id] === offsets[this.id + 1]) return Object.freeze(new Box(0, 0, 0, 0))
    return original.call(this, internal)
  }
  proto.__emptyGuard = true
}

/** Letters, digits and spaces: text that JetBrains Mono's ligatures leave alone... */
const PLAIN = /^[\p{L}\p{N} ]*$/u
/** ...except `www` and the `x` of `0xFF`, which it does restyle. */
const LIGATURE_WORDS = /www|\dx/i
const SHAPE_CACHE_SIZE = 20_000

export class FontStack {
  readonly fonts: fontkit.Font[]
  private readonly pathCache = new Map<string, string>()
  private readonly fontFor = new Map<number, number>()
  private readonly shapeCache = new Map<string, Shaped>()

  constructor(files: string[] = fontFiles()) {
    this.fonts = files.map((file) => {
      const font = fontkit.openSync(file)
      if (!('layout' in font)) throw new Error(`${file} is a font collection; a single font is needed`)
      guardEmptyGlyphs(font)
      return font
    })
  }

  get primary() {
    return this.fonts[0]
  }

  /** Ascent and descent of the primary font, in em (descent negative). */
  get metrics() {
    const f = this.primary
    return { ascent: f.ascent / f.unitsPerEm, descent: f.descent / f.unitsPerEm }
  }

  /** The first font of the stack that has the character (the primary one when none has it). */
  pick(codePoint: number): number {
    let index = this.fontFor.get(codePoint)
    if (index === undefined) {
      index = this.fonts.findIndex((f) => f.hasGlyphForCodePoint(codePoint))
      if (index < 0) index = 0
      this.fontFor.set(codePoint, index)
    }
    return index
  }

  /** Advance of one character in em, as the font that draws it has it. */
  advance(char: string): number {
    const index = this.pick(char.codePointAt(0)!)
    const font = this.fonts[index]
    return font.glyphForCodePoint(char.codePointAt(0)!).advanceWidth / font.unitsPerEm
  }

  /**
   * Shapes text with font fallback: each run of one font goes through that font's layout (GSUB,
   * GPOS), except plain words, which no ligature touches and which take the cmap's glyphs as
   * they are (shaping is the slow part). Glyph `x` is relative to the text's start.
   */
  shape(text: string): Shaped {
    const cached = this.shapeCache.get(text)
    if (cached) return cached
    const glyphs: PlacedGlyph[] = []
    let x = 0
    for (const run of this.runs(text)) {
      const font = this.fonts[run.font]
      const unit = 1 / font.unitsPerEm
      if (PLAIN.test(run.text) && !LIGATURE_WORDS.test(run.text)) {
        for (const char of run.text) {
          const glyph = font.glyphForCodePoint(char.codePointAt(0)!)
          glyphs.push({ font: run.font, id: glyph.id, x, y: 0 })
          x += glyph.advanceWidth * unit
        }
        continue
      }
      const laid = font.layout(run.text)
      laid.glyphs.forEach((glyph, i) => {
        const pos = laid.positions[i]
        glyphs.push({ font: run.font, id: glyph.id, x: x + pos.xOffset * unit, y: pos.yOffset * unit })
        x += pos.xAdvance * unit
      })
    }
    const shaped = { glyphs, width: x }
    if (this.shapeCache.size >= SHAPE_CACHE_SIZE) this.shapeCache.clear()
    this.shapeCache.set(text, shaped)
    return shaped
  }

  /** The outline of a glyph as SVG path data in font units (y up); empty for blank glyphs. */
  glyphPath(font: number, id: number): string {
    const key = `${font}:${id}`
    let d = this.pathCache.get(key)
    if (d === undefined) {
      d = this.fonts[font].getGlyph(id).path.toSVG().replace(/-?\d+\.\d+/g, (n) => String(Math.round(Number(n) * 10) / 10))
      this.pathCache.set(key, d)
    }
    return d
  }

  unitsPerEm(font: number) {
    return this.fonts[font].unitsPerEm
  }

  private *runs(text: string): Generator<{ font: number; text: string }> {
    let current = -1
    let buffer = ''
    for (const char of text) {
      const cp = char.codePointAt(0)!
      // Spaces and combining marks stay with the run they are in, so they never split a ligature or a cluster.
      const index = current >= 0 && (cp === 0x20 || /\p{M}/u.test(char)) ? current : this.pick(cp)
      if (index !== current && buffer) {
        yield { font: current, text: buffer }
        buffer = ''
      }
      current = index
      buffer += char
    }
    if (buffer) yield { font: current, text: buffer }
  }
}
