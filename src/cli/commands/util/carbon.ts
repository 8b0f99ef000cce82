import path from 'node:path'
import { Args, Flags } from '@oclif/core'
import { CARBON_EXPORT_SIZES, CARBON_THEMES, CARBON_WINDOW_THEMES, carbonInput, type CarbonInput } from '../../../shared/schemas/carbon.js'
import { PlazaCommand } from '../../base.js'

export interface CarbonOutput {
  output: string
  width: number
  height: number
  language: string
  font: string
}

export default class UtilCarbon extends PlazaCommand<typeof UtilCarbon> {
  static override description = `Render code as an image in the look of carbon.now.sh (POST /api/carbon, docs/carbon.md): carbon's themes, window themes, background colour, drop shadow, padding and export size.

Themes: ${CARBON_THEMES.join(', ')}.`
  static override examples = [
    '<%= config.bin %> util carbon src/main.rs',
    '<%= config.bin %> util carbon app.ts --theme dracula --window-theme sharp --background "rgba(74,144,226,1)" -o app.png',
    'cat query.sql | <%= config.bin %> util carbon - --language sql --no-line-numbers --export-size 4x',
    '<%= config.bin %> util carbon script.py --background transparent --no-drop-shadow --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    file: Args.string({ description: 'the file to render; - or nothing reads standard input', required: false }),
  }
  static override flags = {
    output: Flags.string({ char: 'o', description: 'where to write the PNG (- for stdout); default: the file name with .png' }),
    theme: Flags.string({ description: "carbon theme (e.g. seti, dracula, monokai, 'solarized dark')", default: 'seti' }),
    'window-theme': Flags.string({ description: 'window look: none (macOS controls), sharp (square corners), bw (grey controls, white border), boxy', options: [...CARBON_WINDOW_THEMES], default: 'none' }),
    background: Flags.string({ description: 'background colour: #rrggbb, rgba(r, g, b, a) or transparent', default: 'rgba(171, 184, 195, 1)' }),
    'line-numbers': Flags.boolean({ description: 'number the lines (--no-line-numbers: none, the default)', allowNo: true, default: false }),
    'first-line-number': Flags.integer({ description: 'number of the first line', min: 0 }),
    'drop-shadow': Flags.boolean({ description: 'draw the drop shadow (--no-drop-shadow: none)', allowNo: true, default: true }),
    'window-controls': Flags.boolean({ description: 'draw the window controls (--no-window-controls: none)', allowNo: true, default: true }),
    'padding-vertical': Flags.string({ description: 'padding above and below the window, e.g. 56px' }),
    'padding-horizontal': Flags.string({ description: 'padding left and right of the window, e.g. 56px' }),
    'export-size': Flags.string({ description: 'pixel density', options: [...CARBON_EXPORT_SIZES], default: '2x' }),
    'font-family': Flags.string({ description: 'Hack (default, drawn with DejaVu Sans Mono), JetBrains Mono, DejaVu Sans Mono; carbon\'s other fonts fall back to JetBrains Mono' }),
    'font-size': Flags.string({ description: 'code size, e.g. 14px' }),
    language: Flags.string({ description: 'shiki language name or alias; default: from the file extension, else detected' }),
    title: Flags.string({ description: 'title in the window bar' }),
  }

  async run(): Promise<CarbonOutput> {
    const { flags } = this
    const { defaultOutput, languageOf, readSnippet, renderEmbedded, renderRemote, writeImage } = await import('../../snippet.js')
    const file = this.args.file && this.args.file !== '-' ? this.args.file : null
    const code = await readSnippet(file, 'carbon')
    const input: CarbonInput = {
      code,
      language: flags.language ?? (await languageOf(file)),
      theme: flags.theme,
      windowTheme: flags['window-theme'],
      backgroundColor: flags.background,
      lineNumbers: flags['line-numbers'],
      firstLineNumber: flags['first-line-number'],
      dropShadow: flags['drop-shadow'],
      windowControls: flags['window-controls'],
      paddingVertical: flags['padding-vertical'],
      paddingHorizontal: flags['padding-horizontal'],
      exportSize: flags['export-size'],
      fontFamily: flags['font-family'],
      fontSize: flags['font-size'],
      titleBar: flags.title,
    }
    let font: string
    let image
    if (this.target.kind === 'remote') {
      image = await renderRemote(this.target.url, '/api/carbon', input, 'image/png')
      font = image.headers?.get('x-font-family') ?? ''
    } else {
      const { FONT_NAMES, toCarbonJob } = await import('../../../server/codeimage/carbon/options.js')
      const parsed = carbonInput.safeParse(input)
      if (!parsed.success) {
        const { describeZodError } = await import('../../../server/errors.js')
        throw new Error(describeZodError(parsed.error))
      }
      const job = toCarbonJob(parsed.data)
      font = FONT_NAMES[job.look.font]
      image = await renderEmbedded(async () => job)
    }
    const output = flags.output ?? defaultOutput(file ? path.basename(file) : null, 'png')
    await writeImage(output, image.data)
    if (output !== '-') this.human(output)
    return { output, width: image.width, height: image.height, language: image.language, font }
  }
}
