import path from 'node:path'
import { Args, Flags } from '@oclif/core'
import { CODE_FONTS, CODE_IMAGE_THEMES, codeImageInput, MAX_SCALE, type CodeImageInput } from '../../../shared/schemas/codeimage.js'
import { PlazaCommand } from '../../base.js'
import { UsageError } from '../../client.js'

export interface CodeImageOutput {
  output: string
  format: 'png' | 'svg'
  width: number
  height: number
  language: string
}

export default class UtilCodeimage extends PlazaCommand<typeof UtilCodeimage> {
  static override description = 'Render a code snippet as an image in the style of ray.so (PNG, or SVG with --format svg).'
  static override examples = [
    '<%= config.bin %> util codeimage src/main.rs',
    '<%= config.bin %> util codeimage app.ts -o app.png --theme breeze --light --line-numbers --highlight 3-5',
    'cat query.sql | <%= config.bin %> util codeimage - --language sql -o query.png',
    '<%= config.bin %> util codeimage script.py --no-background --format svg --url http://127.0.0.1:8080',
    '<%= config.bin %> util codeimage main.go --font fira-code --scale 6 --background-color "#0f172a,#334155" --no-window-controls',
    '<%= config.bin %> util codeimage notes.md --background-image wallpaper.jpg --no-wrap',
  ]
  static override args = {
    file: Args.string({ description: 'the file to render; - or nothing reads standard input', required: false }),
  }
  static override flags = {
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: the file name with .png or .svg' }),
    theme: Flags.string({ description: 'ray.so theme', options: [...CODE_IMAGE_THEMES], default: 'candy' }),
    dark: Flags.boolean({ description: 'dark window (the default)', exclusive: ['light'] }),
    light: Flags.boolean({ description: 'light window', exclusive: ['dark'] }),
    background: Flags.boolean({ description: 'draw the gradient background (--no-background: transparent)', default: true, allowNo: true }),
    padding: Flags.integer({ description: 'padding around the window: 16, 32, 64 or 128 (0-256)', min: 0, max: 256, default: 64 }),
    language: Flags.string({ description: 'shiki language name or alias; default: from the file extension, else detected' }),
    title: Flags.string({ description: 'title in the window bar; default: the file name' }),
    'line-numbers': Flags.boolean({ description: 'number the lines' }),
    highlight: Flags.string({ description: 'lines to highlight, e.g. 3-5,9' }),
    format: Flags.string({ description: 'image format', options: ['png', 'svg'], default: 'png' }),
    scale: Flags.integer({ description: `pixel density, 1-${MAX_SCALE}`, min: 1, max: MAX_SCALE, default: 2 }),
    'font-size': Flags.integer({ description: 'code font size in CSS pixels, 8-64', min: 8, max: 64 }),
    font: Flags.string({ description: 'code font', options: [...CODE_FONTS], default: 'jetbrains-mono' }),
    'max-width': Flags.integer({ description: 'widest image in CSS pixels (default 1320); longer lines wrap; 0: no limit', min: 0, max: 4000 }),
    wrap: Flags.boolean({ description: 'wrap lines longer than the maximum width (--no-wrap: draw them whole)', default: true, allowNo: true }),
    'background-color': Flags.string({ description: 'background instead of the theme\'s gradient: #rrggbb, or #rrggbb,#rrggbb for a gradient' }),
    'background-image': Flags.string({
      description: 'picture behind the window: an image file (with --url it is sent to the server first), or the uploads/... path of one stored there',
    }),
    'window-controls': Flags.boolean({ description: 'draw the three window controls (--no-window-controls hides them)', default: true, allowNo: true }),
  }

  async run(): Promise<CodeImageOutput> {
    const { flags } = this
    const { defaultOutput, languageOf, readPicture, readSnippet, renderEmbedded, renderRemote, writeImage } = await import('../../snippet.js')
    const file = this.args.file && this.args.file !== '-' ? this.args.file : null
    const code = await readSnippet(file, 'codeimage')
    const format = flags.format as 'png' | 'svg'
    const picture = flags['background-image']
    const remote = this.target.kind === 'remote' ? this.target : null
    if (picture && /^https?:\/\//i.test(picture)) throw new UsageError('--background-image takes an image file, or the uploads/... path of one stored on the server (--url)')
    // Against a server a local file goes there first (POST /api/files), and the render reads it by its path.
    const storedPicture = picture && remote ? (/^\/?uploads\//.test(picture) ? picture : await (await import('../../imaging.js')).storeLocalImage(remote.url, picture)) : undefined
    const input: CodeImageInput = {
      codeSnippet: code,
      theme: flags.theme,
      darkMode: !flags.light,
      background: flags.background,
      padding: flags.padding,
      language: flags.language ?? (await languageOf(file)),
      title: flags.title ?? (file ? path.basename(file) : ''),
      lineNumbers: flags['line-numbers'],
      highlightLines: flags.highlight,
      fontSize: flags['font-size'],
      maxWidth: flags['max-width'],
      wrap: flags.wrap,
      scale: flags.scale,
      format,
      fontFamily: flags.font,
      backgroundColor: flags['background-color'],
      backgroundImage: storedPicture,
      windowControls: flags['window-controls'],
    }
    const image =
      this.target.kind === 'remote'
        ? await renderRemote(this.target.url, '/api/codeimage', input, format === 'svg' ? 'image/svg+xml' : 'image/png')
        : await renderEmbedded(async () => {
            const { toRenderJob } = await import('../../../server/codeimage/validate.js')
            const job = toRenderJob(codeImageInput.parse(input))
            if (!picture) return job
            if (!flags.background) throw new UsageError('--background-image draws the background, which --no-background leaves out')
            return { ...job, backgroundImageBytes: await readPicture(picture) }
          })
    const output = flags.output ?? defaultOutput(file, format)
    await writeImage(output, image.data)
    if (output !== '-') this.human(output)
    return { output, format: image.format, width: image.width, height: image.height, language: image.language }
  }
}
