/**
 * The fonts of a code image, loaded once per renderer: the code font (JetBrains Mono, ray.so's
 * default, or another of CODE_FONTS), then DejaVu Sans Mono for symbols, box drawing, Greek and
 * Cyrillic, then Noto Sans Hans (GB 2312: Chinese, kana) for CJK. Scripts the code fonts lack
 * (Hangul, Arabic, Hebrew, Devanagari, Thai) have Noto fonts of their own, opened the first time
 * a character of their Unicode blocks asks for them. All ship as TTF/OTF/WOFF inside npm
 * packages (fontkit reads them all), so rendering works offline.
 *
 * Glyphs become SVG paths (fontkit shapes each run: ligatures, Arabic joining, Indic conjuncts,
 * right-to-left runs in visual order), so resvg needs no font of its own and an SVG answer looks
 * the same in every viewer.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import * as fontkit from 'fontkit'
import type { CodeFont } from '../../shared/schemas/codeimage.js'

const require = createRequire(import.meta.url)

/** The files of each code font: the font itself, then (Cascadia Code) its Latin Extended part. */
const CODE_FONT_FILES: Record<CodeFont, string[]> = {
  'jetbrains-mono': ['@expo-google-fonts/jetbrains-mono/400Regular/JetBrainsMono_400Regular.ttf'],
  'fira-code': ['@expo-google-fonts/fira-code/400Regular/FiraCode_400Regular.ttf'],
  'source-code-pro': ['@expo-google-fonts/source-code-pro/400Regular/SourceCodePro_400Regular.ttf'],
  'ibm-plex-mono': ['@expo-google-fonts/ibm-plex-mono/400Regular/IBMPlexMono_400Regular.ttf'],
  'cascadia-code': ['@fontsource/cascadia-code/files/cascadia-code-latin-400-normal.woff', '@fontsource/cascadia-code/files/cascadia-code-latin-ext-400-normal.woff'],
}

function fallbackFiles(): string[] {
  const cjkPackage = path.dirname(path.dirname(require.resolve('@embedpdf/fonts-sc')))
  return [require.resolve('dejavu-fonts-ttf/ttf/DejaVuSansMono.ttf'), path.join(cjkPackage, 'fonts', 'NotoSansHans-Regular.otf')]
}

/** Where each font of the stack lives, in fallback order: the code font's files, DejaVu Sans Mono, Noto Sans Hans. */
export function fontFiles(family: CodeFont = 'jetbrains-mono'): string[] {
  return [...CODE_FONT_FILES[family].map((file) => require.resolve(file)), ...fallbackFiles()]
}

/** A font for one script, opened the first time a character of its blocks is drawn. */
export interface ScriptFont {
  script: string
  /** Inclusive code point ranges the font is asked for. */
  ranges: Array<[number, number]>
  file: () => string
}

const packageFile = (pkg: string, file: string) => () => path.join(path.dirname(path.dirname(require.resolve(pkg))), 'fonts', file)

/** The script fonts, asked before the fallbacks for their blocks (DejaVu has a few Arabic and Hebrew letters, unshaped). */
export const SCRIPT_FONTS: ScriptFont[] = [
  {
    script: 'Hangul',
    ranges: [[0x1100, 0x11ff], [0x3130, 0x318f], [0xa960, 0xa97f], [0xac00, 0xd7ff]],
    file: packageFile('@embedpdf/fonts-kr', 'NotoSansKR-Regular.otf'),
  },
  {
    script: 'Arabic',
    ranges: [[0x0600, 0x06ff], [0x0750, 0x077f], [0x08a0, 0x08ff], [0xfb50, 0xfdff], [0xfe70, 0xfeff]],
    file: packageFile('@embedpdf/fonts-arabic', 'NotoNaskhArabic-Regular.ttf'),
  },
  {
    script: 'Hebrew',
    ranges: [[0x0590, 0x05ff], [0xfb1d, 0xfb4f]],
    file: packageFile('@embedpdf/fonts-hebrew', 'NotoSansHebrew-Regular.ttf'),
  },
  {
    script: 'Devanagari',
    ranges: [[0x0900, 0x097f], [0xa8e0, 0xa8ff], [0x1cd0, 0x1cff]],
    file: () => require.resolve('@expo-google-fonts/noto-sans-devanagari/400Regular/NotoSansDevanagari_400Regular.ttf'),
  },
  {
    script: 'Thai',
    ranges: [[0x0e00, 0x0e7f]],
    file: () => require.resolve('@expo-google-fonts/noto-sans-thai/400Regular/NotoSansThai_400Regular.ttf'),
  },
]

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

/**
 * Letters, digits and spaces of scripts drawn glyph by glyph: text that the code fonts'
 * ligatures leave alone (Arabic, Hebrew and the Indic scripts always go through shaping)...
 */
const PLAIN = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}0-9 ]*$/u
/** ...except `www` and the `x` of `0xFF`, which it does restyle. */
const LIGATURE_WORDS = /www|\dx/i
const SHAPE_CACHE_SIZE = 20_000

function openFont(file: string): fontkit.Font {
  const font = fontkit.openSync(file)
  if (!('layout' in font)) throw new Error(`${file} is a font collection; a single font is needed`)
  guardEmptyGlyphs(font)
  return font
}

export class FontStack {
  /** The fonts by index: `files` first, then the script fonts (absent until opened). */
  readonly fonts: fontkit.Font[]
  private readonly pathCache = new Map<string, string>()
  private readonly fontFor = new Map<number, number>()
  private readonly shapeCache = new Map<string, Shaped>()
  private readonly blank = new Map<number, boolean>()
  /** Advances by character (em), as `advance` answers them. */
  private readonly advances = new Map<string, number>()
  private readonly upem: number[] = []

  /**
   * `files` in fallback order; the first `primaryCount` of them are the code font, asked before the
   * script fonts, the rest after them.
   */
  constructor(
    files: string[] = fontFiles(),
    private readonly primaryCount = 1,
    private readonly scripts: ScriptFont[] = SCRIPT_FONTS,
  ) {
    this.fonts = files.map(openFont)
    this.fontsLength = files.length
  }

  /** How many fonts `files` gave (script fonts take the indices after them). */
  private readonly fontsLength: number

  /** A stack for one of CODE_FONTS. */
  static forFamily(family: CodeFont): FontStack {
    return new FontStack(fontFiles(family), CODE_FONT_FILES[family].length)
  }

  /** The index of the script font for `codePoint`, opened now if it is not yet; -1 when no script font covers it. */
  private scriptFont(codePoint: number): number {
    const k = this.scripts.findIndex((s) => s.ranges.some(([from, to]) => codePoint >= from && codePoint <= to))
    if (k < 0) return -1
    const index = this.fontsLength + k
    if (!this.fonts[index]) this.fonts[index] = openFont(this.scripts[k].file())
    return this.fonts[index].hasGlyphForCodePoint(codePoint) ? index : -1
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
      const count = this.fontsLength
      const has = (i: number) => this.fonts[i].hasGlyphForCodePoint(codePoint)
      index = -1
      for (let i = 0; i < Math.min(this.primaryCount, count) && index < 0; i++) if (has(i)) index = i
      if (index < 0) index = this.scriptFont(codePoint)
      for (let i = this.primaryCount; i < count && index < 0; i++) if (has(i)) index = i
      if (index < 0) index = 0
      this.fontFor.set(codePoint, index)
    }
    return index
  }

  /** Advance of one character in em, as the font that draws it has it. */
  advance(char: string): number {
    let advance = this.advances.get(char)
    if (advance === undefined) {
      const index = this.pick(char.codePointAt(0)!)
      const font = this.fonts[index]
      advance = font.glyphForCodePoint(char.codePointAt(0)!).advanceWidth / font.unitsPerEm
      this.advances.set(char, advance)
    }
    return advance
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

  /** True for a glyph with no outline (a space): nothing to draw. */
  isBlank(font: number, id: number): boolean {
    const key = font * 0x10000 + id
    let blank = this.blank.get(key)
    if (blank === undefined) this.blank.set(key, (blank = !this.glyphPath(font, id)))
    return blank
  }

  unitsPerEm(font: number) {
    // fontkit reads it from the head table on every call; it is asked once per glyph drawn.
    return (this.upem[font] ??= this.fonts[font].unitsPerEm)
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
