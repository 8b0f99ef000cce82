import { Args, Flags } from '@oclif/core'
import { LOGO_STYLE_NAMES } from '../../../shared/schemas/logo.js'
import { PlazaCommand } from '../../base.js'
import type { CardCommandOutput } from '../../maker.js'

export default class UtilLogo extends PlazaCommand<typeof UtilLogo> {
  static override description = `Make a text logo as PNG in one of several styles (GET /api/logo): ${LOGO_STYLE_NAMES.join(', ')}.

Colours are #rgb, #rrggbb or CSS names; --background also takes transparent. With --url the server does the work; without, it runs here.`
  static override examples = [
    '<%= config.bin %> util logo "Plaza" --style neon',
    '<%= config.bin %> util logo "Acme Rockets" --style retro --color tomato --size 512 -o acme.png --json',
  ]
  static override args = {
    text: Args.string({ description: 'the logo text (at most 40 characters)', required: true }),
  }
  static override flags = {
    style: Flags.string({ description: 'the style', options: LOGO_STYLE_NAMES, default: 'gradient' }),
    color: Flags.string({ description: 'main colour (default per style)' }),
    background: Flags.string({ description: 'background colour or transparent (default per style)' }),
    size: Flags.integer({ description: 'height in pixels, 64-1024', min: 64, max: 1024 }),
    output: Flags.string({ char: 'o', description: 'where to write the PNG (- for stdout); default: logo-<text>-<style>.png' }),
  }

  async run(): Promise<CardCommandOutput> {
    const { runCardCommand, slug } = await import('../../maker.js')
    const { flags } = this
    const result = await runCardCommand(
      this.target,
      () => this.client(),
      'logo',
      { text: this.args.text, style: flags.style, color: flags.color, background: flags.background, size: flags.size === undefined ? undefined : String(flags.size) },
      flags.output ?? `logo-${slug(this.args.text)}-${flags.style}.png`,
    )
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
