/**
 * The renderer: fonts and highlighter loaded once, then snippet → tokens → SVG → PNG.
 * It runs inside a worker thread (see pool.ts) so that a large snippet never holds up the
 * server's event loop; it is plain code, so the tests and the benchmark can also call it directly.
 */
import { Resvg } from '@resvg/resvg-js'
import sharp from 'sharp'
import type { CarbonTheme, CarbonWindowTheme } from '../../shared/schemas/carbon.js'
import type { CodeFont, CodeImageTheme } from '../../shared/schemas/codeimage.js'
import { composeCarbon, composeCarbonRgb, encodeRgb, encodeRgba } from './carbon/compose.js'
import { buildCarbonScene } from './carbon/scene.js'
import { BackdropCache, compose, GlyphAtlas } from './compose.js'
import { FontStack, fontFiles } from './fonts.js'
import { Tokenizer } from './highlight.js'
import { detectLanguage } from './languages.js'
import { buildScene, TAB_SIZE, TooLargeError } from './scene.js'
import { THEMES } from './themes.js'
import { WARM_UP_JOB } from './warm-up.js'

/** A validated `/api/codeimage` request (see validate.ts): `language` is a shiki id, or null to detect it. */
export interface CodeImageJob {
  kind?: 'codeimage'
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
  /** The code font; JetBrains Mono when absent. */
  fontFamily?: CodeFont
  /** The background's gradient (from = to: one colour) instead of the theme's. */
  backgroundColor?: { from: string; to: string }
  /** The `uploads/...` path of the background picture (what the stored image's name is made of). */
  backgroundImage?: string
  /** The picture's bytes, read from storage by the request handler (background.ts) or from a file by the CLI, before the job goes to a worker. */
  backgroundImageBytes?: Uint8Array
  /** false: no window controls. */
  windowControls?: boolean
}

/** carbon.now.sh's look (carbon/options.ts reads carbon's options into it; carbon/scene.ts draws it). */
export interface CarbonLook {
  theme: CarbonTheme
  /** The image's background: `#rrggbb`, or `rgba(r, g, b, a)` when translucent (alpha 0: transparent). */
  background: string
  windowTheme: CarbonWindowTheme
  windowControls: boolean
  paddingVertical: number
  paddingHorizontal: number
  dropShadow: { offsetY: number; blur: number } | null
  lineNumbers: boolean
  firstLineNumber: number
  font: CodeFont | 'dejavu-sans-mono'
  fontSize: number
  /** Line height as a multiple of the font size. */
  lineHeight: number
  /** The image's width in CSS px, or null for a window that fits the code. */
  width: number | null
  squared: boolean
  title: string
}

/** A validated `/api/carbon` request: always a PNG, `scale` from carbon's export size. */
export interface CarbonJob {
  kind: 'carbon'
  code: string
  language: string | null
  look: CarbonLook
  scale: number
}

export type RenderJob = CodeImageJob | CarbonJob

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

/** Longest side a background picture keeps for an SVG answer (it is scaled to the canvas there). */
const SVG_PICTURE_SIDE = 2048

/**
 * A background picture (bytes checked by the caller: an image of a size that may be decoded):
 * its RGB pixels cropped to cover a canvas, or, for an SVG answer, a JPEG data: URI.
 */
async function decodePicture(bytes: Uint8Array) {
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  try {
    await sharp(input).metadata()
  } catch {
    throw new RenderRefusal(400, 'backgroundImage: the file could not be decoded as an image')
  }
  return {
    /** RGB pixels, width×height, the picture scaled and cropped to cover them (CSS background-size: cover). */
    cover: async (width: number, height: number) =>
      sharp(input).rotate().flatten({ background: '#000000' }).resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer(),
    dataUri: async () => {
      const jpeg = await sharp(input).rotate().flatten({ background: '#000000' }).resize(SVG_PICTURE_SIDE, SVG_PICTURE_SIDE, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer()
      return `data:image/jpeg;base64,${jpeg.toString('base64')}`
    },
  }
}

/** Largest compositor buffer kept between renders (a 4x render of a mid-sized snippet). */
const SPARE_CANVAS_BYTES = 64 * 1024 * 1024

export class Renderer {
  private readonly atlas: GlyphAtlas
  private spare: Buffer | null = null
  /** Backdrops of recent sizes, themes and titles (compose.ts), shared by every code font. */
  private readonly backdrops = new BackdropCache()
  /** The other code fonts (CODE_FONTS) and their glyph atlases, each loaded the first time a render asks for it. */
  private readonly families = new Map<CodeFont, { fonts: FontStack; atlas: GlyphAtlas }>()
  /** DejaVu Sans Mono first (carbon's Hack) and its glyph atlas, loaded the first time a carbon image asks for it. */
  private dejavu: { fonts: FontStack; atlas: GlyphAtlas } | null = null

  private constructor(
    private readonly fonts: FontStack,
    private readonly tokenizer: Tokenizer,
  ) {
    this.atlas = new GlyphAtlas(fonts)
  }

  /** Loads the fonts and starts the highlighter: once per renderer. */
  static async create(): Promise<Renderer> {
    return new Renderer(new FontStack(), await Tokenizer.create())
  }

  /**
   * A buffer for the compositor: the previous render's when it is large enough (every byte gets
   * painted), which saves allocating and page-faulting ~10 MB per render; concurrent renders
   * each get their own. A new one is a quarter larger than asked (within the spare's bound), so
   * that the next, slightly larger image reuses it: each new buffer is external memory that makes
   * V8 collect garbage (a full collection, when they come one after another).
   */
  private canvas(bytes: number): Buffer {
    const spare = this.spare
    this.spare = null
    if (spare && spare.length >= bytes) return spare
    return Buffer.allocUnsafe(bytes > SPARE_CANVAS_BYTES ? bytes : Math.min(SPARE_CANVAS_BYTES, Math.ceil(bytes * 1.25)))
  }

  /** Renders WARM_UP_JOB once, so that the first real render pays for nothing but itself. */
  async warm(): Promise<void> {
    await this.render(WARM_UP_JOB)
  }

  /** The font stack and atlas of a code font: JetBrains Mono's are the renderer's own. */
  private family(name: CodeFont = 'jetbrains-mono'): { fonts: FontStack; atlas: GlyphAtlas } {
    if (name === 'jetbrains-mono') return { fonts: this.fonts, atlas: this.atlas }
    let family = this.families.get(name)
    if (!family) {
      const fonts = FontStack.forFamily(name)
      family = { fonts, atlas: new GlyphAtlas(fonts) }
      this.families.set(name, family)
    }
    return family
  }

  async render(job: RenderJob): Promise<RenderResult> {
    if (job.kind === 'carbon') return this.renderCarbon(job)
    const code = normalizeCode(job.code)
    const language = job.language ?? detectLanguage(code)
    const lines = await this.tokenizer.tokenize(code, language)
    const { fonts, atlas } = this.family(job.fontFamily)
    const picture = job.background && job.backgroundImageBytes ? await decodePicture(job.backgroundImageBytes) : null
    let scene
    try {
      scene = buildScene(fonts, lines, {
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
        backgroundColor: job.backgroundColor,
        backgroundImage: picture && job.format === 'svg' ? await picture.dataUri() : undefined,
        windowControls: job.windowControls,
      })
    } catch (error) {
      if (error instanceof TooLargeError) throw new RenderRefusal(413, error.message)
      throw error
    }
    const { width, height } = scene
    if (job.format === 'svg') return { data: new TextEncoder().encode(scene.svg()), format: 'svg', width, height, language }
    if (job.background) {
      // Every pixel is opaque: compose.ts paints the scene as RGB, and libvips encodes it
      // (3 channels and zlib level 1: about a third of the time of RGBA at level 2, 3% larger).
      const canvas = this.canvas(width * height * 3)
      try {
        if (picture) scene.layers.image = await picture.cover(width, height)
        const rgb = compose(scene.layers, width, height, atlas, canvas, this.backdrops)
        const png = await sharp(rgb, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer()
        return { data: png, format: 'png', width, height, language }
      } finally {
        if (canvas.length <= SPARE_CANVAS_BYTES) this.spare = canvas
      }
    }
    // Transparent images: resvg draws the whole SVG and its encoder un-premultiplies the edges.
    // No system fonts: every glyph is already a path, and scanning the system's fonts is slow.
    const png = new Resvg(scene.svg(), { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render().asPng()
    return { data: png, format: 'png', width, height, language }
  }

  private fontsFor(font: CarbonLook['font']): { fonts: FontStack; atlas: GlyphAtlas } {
    if (font !== 'dejavu-sans-mono') return this.family(font)
    if (!this.dejavu) {
      const [jetbrains, dejavu, cjk] = fontFiles()
      // DejaVu Sans Mono has a few Arabic and Hebrew letters, unshaped: the script fonts go first for their blocks.
      const fonts = new FontStack([dejavu, jetbrains, cjk], 0)
      this.dejavu = { fonts, atlas: new GlyphAtlas(fonts) }
    }
    return this.dejavu
  }

  /**
   * carbon's look: its own compositor (carbon/compose.ts) paints the background and the blurred,
   * offset shadow, which the ray.so compositor does not draw, and resvg the rest.
   */
  private async renderCarbon(job: CarbonJob): Promise<RenderResult> {
    const code = normalizeCode(job.code)
    const language = job.language ?? detectLanguage(code)
    const lines = await this.tokenizer.tokenize(code, language)
    const { fonts, atlas } = this.fontsFor(job.look.font)
    let scene
    try {
      scene = buildCarbonScene(fonts, lines, job.look, job.scale)
    } catch (error) {
      if (error instanceof TooLargeError) throw new RenderRefusal(413, error.message)
      throw error
    }
    const { width, height, layers } = scene
    const chrome = job.look.windowControls || job.look.windowTheme === 'bw'
    const png =
      layers.background.a >= 1
        ? await encodeRgb(composeCarbonRgb(layers, width, height, atlas, job.look.windowTheme === 'bw', chrome), width, height)
        : await encodeRgba(composeCarbon(layers, width, height), width, height)
    return { data: png, format: 'png', width: scene.width, height: scene.height, language }
  }
}
