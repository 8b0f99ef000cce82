/**
 * The renderer: fonts and highlighter loaded once, then snippet → tokens → SVG → PNG.
 * It runs inside a worker thread (see pool.ts) so that a large snippet never holds up the
 * server's event loop; it is plain code, so the tests and the benchmark can also call it directly.
 */
import { Resvg } from '@resvg/resvg-js'
import sharp from 'sharp'
import type { CodeImageTheme } from '../../shared/schemas/codeimage.js'
import { FontStack } from './fonts.js'
import { Tokenizer } from './highlight.js'
import { detectLanguage } from './languages.js'
import { buildScene, TAB_SIZE, TooLargeError } from './scene.js'
import { THEMES } from './themes.js'

/** A validated request (see validate.ts): `language` is a shiki id, or null to detect it. */
export interface RenderJob {
  code: string
  language: string | null
  theme: CodeImageTheme
  darkMode: boolean
  background: boolean
  padding: number
  title: string
  lineNumbers: boolean
  highlight: number[]
  fontSize: number
  maxWidth?: number
  scale: number
  format: 'png' | 'svg'
}

export interface RenderResult {
  data: Uint8Array
  format: 'png' | 'svg'
  width: number
  height: number
  /** The language used (the detected one when none was given). */
  language: string
}

/** A failure the client caused; `status` is the HTTP status to answer with. */
export class RenderRefusal extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message)
  }
}

/** Line endings to `\n`, tabs to spaces at tab stops, control characters out, trailing blank lines off. */
export function normalizeCode(code: string): string {
  return code
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => {
      let out = ''
      for (const char of line.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')) {
        out += char === '\t' ? ' '.repeat(TAB_SIZE - ([...out].length % TAB_SIZE)) : char
      }
      return out.replace(/\s+$/, '')
    })
    .join('\n')
    .replace(/\n+$/, '')
}

export class Renderer {
  private constructor(
    private readonly fonts: FontStack,
    private readonly tokenizer: Tokenizer,
  ) {}

  /** Loads the fonts and starts the highlighter: once per renderer. */
  static async create(): Promise<Renderer> {
    return new Renderer(new FontStack(), await Tokenizer.create())
  }

  async render(job: RenderJob): Promise<RenderResult> {
    const code = normalizeCode(job.code)
    const language = job.language ?? detectLanguage(code)
    const lines = await this.tokenizer.tokenize(code, language)
    let scene
    try {
      scene = buildScene(this.fonts, lines, {
        theme: THEMES[job.theme],
        darkMode: job.darkMode,
        background: job.background,
        padding: job.padding,
        title: job.title,
        lineNumbers: job.lineNumbers,
        highlight: new Set(job.highlight),
        fontSize: job.fontSize,
        maxWidth: job.maxWidth,
        scale: job.scale,
      })
    } catch (error) {
      if (error instanceof TooLargeError) throw new RenderRefusal(413, error.message)
      throw error
    }
    const { svg, width, height } = scene
    if (job.format === 'svg') return { data: new TextEncoder().encode(svg), format: 'svg', width, height, language }
    // No system fonts: every glyph is already a path, and scanning the system's fonts is slow.
    const rendered = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render()
    // With the background on every pixel is opaque, so resvg's premultiplied pixels are plain
    // RGBA, and libvips at a light compression level encodes them in about a third of the time of
    // resvg's own encoder. Transparent images keep resvg's encoder, which un-premultiplies.
    const png = job.background
      ? await sharp(rendered.pixels, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 2 }).toBuffer()
      : rendered.asPng()
    return { data: png, format: 'png', width, height, language }
  }
}
