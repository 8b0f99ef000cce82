/**
 * Text for the card renderers (meme, fakepost, logo): measured with fontkit, wrapped to a width,
 * shrunk to fit a box, and drawn as SVG paths, so resvg needs no font of its own and every
 * machine draws the same pixels. Each character takes the first font of its set that has it
 * (DejaVu, then Noto Sans SC for Chinese and kana), and each emoji is Twemoji's picture, inlined
 * as a nested <svg> (never <use>/<symbol>: resvg 2.6.2 aborts the process on them).
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import * as fontkit from 'fontkit'
import { emojiSvg, splitEmoji } from './emoji.js'

const require = createRequire(import.meta.url)

const dejavu = (name: string) => require.resolve(`dejavu-fonts-ttf/ttf/${name}.ttf`)
const noto = (weight: 'Regular' | 'Bold') => path.join(path.dirname(path.dirname(require.resolve('@embedpdf/fonts-sc'))), 'fonts', `NotoSansHans-${weight}.otf`)

/** The font sets, each in fallback order. */
const SETS = {
  /** The classic meme caption: heavy and narrow, like Impact. */
  impact: () => [dejavu('DejaVuSansCondensed-Bold'), dejavu('DejaVuSans-Bold'), noto('Bold')],
  sans: () => [dejavu('DejaVuSans'), noto('Regular')],
  'sans-bold': () => [dejavu('DejaVuSans-Bold'), noto('Bold')],
  'serif-bold': () => [dejavu('DejaVuSerif-Bold'), dejavu('DejaVuSans-Bold'), noto('Bold')],
  mono: () => [require.resolve('@expo-google-fonts/jetbrains-mono/700Bold/JetBrainsMono_700Bold.ttf'), dejavu('DejaVuSansMono-Bold'), noto('Bold')],
} as const

export type FontSetName = keyof typeof SETS

/** Fonts are opened once per process (per worker) and shared by the sets that list them. */
const opened = new Map<string, fontkit.Font>()
function openFont(file: string): fontkit.Font {
  let font = opened.get(file)
  if (!font) {
    const loaded = fontkit.openSync(file)
    if (!('layout' in loaded)) throw new Error(`${file} is a font collection; a single font is needed`)
    opened.set(file, (font = loaded))
  }
  return font
}

/** Emoji are drawn one em square, with a little room either side. */
const EMOJI_ADVANCE = 1.2
const EMOJI_TOP = -0.88

export class FontSet {
  private readonly fonts: Array<fontkit.Font | undefined>
  private readonly fontFor = new Map<number, number>()

  constructor(private readonly files: string[]) {
    this.fonts = files.map(() => undefined)
  }

  /** The font at `index`, opened on first use (the CJK font, 8 MB, only when a text needs it). */
  font(index: number): fontkit.Font {
    return (this.fonts[index] ??= openFont(this.files[index]))
  }

  /** Ascent and descent of the primary font, in em (descent negative). */
  get metrics() {
    const f = this.font(0)
    return { ascent: f.ascent / f.unitsPerEm, descent: f.descent / f.unitsPerEm }
  }

  /** The first font that has the character; the primary one (its .notdef box) when none has it. */
  pick(codePoint: number): number {
    let index = this.fontFor.get(codePoint)
    if (index === undefined) {
      index = 0
      for (let i = 0; i < this.files.length; i++) {
        if (this.font(i).hasGlyphForCodePoint(codePoint)) {
          index = i
          break
        }
      }
      this.fontFor.set(codePoint, index)
    }
    return index
  }
}

const sets = new Map<FontSetName, FontSet>()
export function fontSet(name: FontSetName): FontSet {
  let set = sets.get(name)
  if (!set) sets.set(name, (set = new FontSet([...SETS[name]()])))
  return set
}

export type Placed = { font: number; id: number; x: number; y: number } | { emoji: string; x: number }

/** One line laid out in em from its start. */
export interface Line {
  text: string
  items: Placed[]
  width: number
}

/** Control characters out, runs of spaces kept as they are. */
export const cleanText = (text: string) => text.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').replace(/[\u0000-\u0008\u000b-\u001f\u007f\u200b\u2028\u2029]/g, '')

/** Lays out one line (no line breaks) in em: font runs shaped by fontkit (kerning), emoji as pictures. */
export function layoutLine(set: FontSet, raw: string): Line {
  const text = cleanText(raw).replace(/\n/g, ' ')
  const items: Placed[] = []
  let x = 0
  for (const run of splitEmoji(text)) {
    if (run.emoji && emojiSvg(run.text)) {
      items.push({ emoji: run.text, x })
      x += EMOJI_ADVANCE
      continue
    }
    let current = -1
    let buffer = ''
    const flush = () => {
      if (!buffer) return
      const font = set.font(current)
      const unit = 1 / font.unitsPerEm
      const laid = font.layout(buffer)
      laid.glyphs.forEach((glyph, i) => {
        const pos = laid.positions[i]
        items.push({ font: current, id: glyph.id, x: x + pos.xOffset * unit, y: -pos.yOffset * unit })
        x += pos.xAdvance * unit
      })
      buffer = ''
    }
    for (const char of run.text) {
      const cp = char.codePointAt(0)!
      // Spaces and combining marks stay in the run they are in.
      const index = current >= 0 && (cp === 0x20 || /\p{M}/u.test(char)) ? current : set.pick(cp)
      if (index !== current) flush()
      current = index
      buffer += char
    }
    flush()
  }
  return { text, items, width: x }
}

/** Width of `text` in em. */
export const measure = (set: FontSet, text: string): number => layoutLine(set, text).width

const BREAK_AROUND = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' })

/** Pieces a line may break after: words with their trailing spaces, and each CJK character alone. */
function segments(paragraph: string): string[] {
  const out: string[] = []
  let word = ''
  for (const { segment } of graphemes.segment(paragraph)) {
    if (BREAK_AROUND.test(segment)) {
      if (word) out.push(word)
      out.push(segment)
      word = ''
    } else if (/^\s+$/.test(segment)) {
      word += segment
    } else {
      if (word && /\s$/.test(word)) {
        out.push(word)
        word = ''
      }
      word += segment
    }
  }
  if (word) out.push(word)
  return out
}

/**
 * Wraps `text` to `maxWidth` em: at spaces and between CJK characters, a word longer than the
 * line cut between characters; `\n` always breaks. Lines are laid out, trailing spaces trimmed.
 */
export function wrap(set: FontSet, text: string, maxWidth: number): Line[] & { cutWords?: boolean } {
  const lines: string[] = []
  let cutWords = false
  for (const paragraph of cleanText(text).split('\n')) {
    let line = ''
    let width = 0
    for (const segment of segments(paragraph)) {
      const segWidth = measure(set, segment)
      const trimmed = measure(set, segment.trimEnd())
      if (line && width + trimmed > maxWidth) {
        lines.push(line)
        line = ''
        width = 0
      }
      if (!line && trimmed > maxWidth) {
        // One word wider than the line: cut it between characters.
        cutWords = true
        for (const { segment: char } of graphemes.segment(segment.trimEnd())) {
          const w = measure(set, char)
          if (line && width + w > maxWidth) {
            lines.push(line)
            line = ''
            width = 0
          }
          line += char
          width += w
        }
        const space = segment.slice(segment.trimEnd().length)
        line += space
        width += measure(set, space)
        continue
      }
      line += segment
      width += segWidth
    }
    lines.push(line)
  }
  return Object.assign(
    lines.map((line) => layoutLine(set, line.trimEnd())),
    { cutWords },
  )
}

export interface FitOptions {
  /** The box, in px. */
  width: number
  height: number
  /** Font sizes tried, from `maxSize` down to `minSize` px. */
  maxSize: number
  minSize: number
  lineHeight: number
}

export interface Fitted {
  size: number
  lines: Line[]
}

/**
 * The largest size (stepping down by ~6%) at which `text`, wrapped to the box's width, fits its
 * height. At `minSize` the lines that still do not fit are dropped, the last kept one ending in `…`.
 */
export function fitText(set: FontSet, text: string, options: FitOptions): Fitted {
  let size = options.maxSize
  for (;;) {
    const lines = wrap(set, text, options.width / size)
    // A word cut in two is a last resort: a smaller size that keeps words whole is tried first.
    const fits = !lines.cutWords && lines.length * size * options.lineHeight <= options.height && lines.every((l) => l.width * size <= options.width + 0.5)
    if (fits) return { size, lines }
    const next = Math.floor(size * 0.94)
    if (next < options.minSize || next === size) break
    size = next
  }
  size = options.minSize
  const lines = wrap(set, text, options.width / size)
  const room = Math.max(1, Math.floor(options.height / (size * options.lineHeight)))
  if (lines.length <= room) return { size, lines }
  const kept = lines.slice(0, room)
  let last = kept[room - 1].text
  while (last && measure(set, `${last}…`) * size > options.width) last = [...last].slice(0, -1).join('')
  kept[room - 1] = layoutLine(set, `${last.trimEnd()}…`)
  return { size, lines: kept }
}

const round = (n: number) => Math.round(n * 100) / 100

/** The emoji's Twemoji SVG as a nested <svg> placed at (x, y), `size` px square. */
export function emojiElement(cluster: string, x: number, y: number, size: number): string {
  const svg = emojiSvg(cluster)
  if (!svg) return ''
  const inner = svg.replace(/^[\s\S]*?<svg[^>]*>/, '').replace(/<\/svg>\s*$/, '')
  return `<svg x="${round(x)}" y="${round(y)}" width="${round(size)}" height="${round(size)}" viewBox="0 0 36 36">${inner}</svg>`
}

/** SVG path data of the glyphs of `line` at `size` px, its start at (x, baseline). */
export function glyphPathData(set: FontSet, line: Line, x: number, baseline: number, size: number): string {
  let d = ''
  for (const item of line.items) {
    if ('emoji' in item) continue
    const font = set.font(item.font)
    const scale = size / font.unitsPerEm
    const glyph = font.getGlyph(item.id)
    const path = glyph.path
    if (!path.commands.length) continue
    d += path.transform(scale, 0, 0, -scale, x + item.x * size, baseline + item.y * size).toSVG().replace(/-?\d+\.\d+/g, (n) => String(round(Number(n))))
  }
  return d
}

export interface DrawOptions {
  /** Anchor point: `x` is the start, middle or end of each line per `align`; `y` the top of the first line. */
  x: number
  y: number
  size: number
  lineHeight: number
  align: 'start' | 'middle' | 'end'
  /** Attributes of the glyphs' <path> (fill, stroke, ...), already escaped. */
  attributes: string
  /** Leave emoji out (an outline copy of the text, a shadow layer). */
  noEmoji?: boolean
}

/** Draws laid-out lines: one <path> for every glyph, then each emoji. */
export function drawLines(set: FontSet, lines: Line[], options: DrawOptions): string {
  const { ascent, descent } = set.metrics
  const { size } = options
  // Centre the font's ascent-to-descent box within each line's height.
  const lead = (options.lineHeight - (ascent - descent)) / 2
  let d = ''
  let emoji = ''
  lines.forEach((line, i) => {
    const width = line.width * size
    const start = options.align === 'start' ? options.x : options.align === 'middle' ? options.x - width / 2 : options.x - width
    const baseline = options.y + (i * options.lineHeight + lead + ascent) * size
    d += glyphPathData(set, line, start, baseline, size)
    if (!options.noEmoji) {
      for (const item of line.items) {
        if ('emoji' in item) emoji += emojiElement(item.emoji, start + (item.x + (EMOJI_ADVANCE - 1) / 2) * size, baseline + EMOJI_TOP * size, size)
      }
    }
  })
  return `${d ? `<path ${options.attributes} d="${d}"/>` : ''}${emoji}`
}

/** Escapes text for an SVG attribute or text node. */
export const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
