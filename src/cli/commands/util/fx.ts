import { Args, Flags } from '@oclif/core'
import { IMAGE_EFFECT_NAMES } from '../../../shared/schemas/imaging.js'
import { PlazaCommand } from '../../base.js'
import type { ImageCommandOutput } from '../../imaging.js'

export default class UtilFx extends PlazaCommand<typeof UtilFx> {
  static override description = `Apply a photo effect to an image (GET /api/imageFx): by name or by its number in the list (docs/imaging.md).

IMAGE is a local file, an http(s) URL, or an uploads/... path of the server. With --url the server does the work (a local file is sent to it as a form); without, it runs here.

Effects: ${IMAGE_EFFECT_NAMES.map((name, i) => `${i + 1} ${name}`).join(', ')}.`
  static override examples = [
    '<%= config.bin %> util fx photo.jpg sepia',
    '<%= config.bin %> util fx photo.png 8 -o blocks.png',
    '<%= config.bin %> util fx https://example.com/cat.jpg duotone-sunset --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    image: Args.string({ description: 'local file, http(s) URL or uploads/... path', required: true }),
    effect: Args.string({ description: 'effect name or number (1 to the list length)', required: true }),
  }
  static override flags = {
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: <name>-<effect>.png or .jpg' }),
  }

  async run(): Promise<ImageCommandOutput> {
    const { runImageCommand } = await import('../../imaging.js')
    const result = await runImageCommand(this.target, () => this.client(), { kind: 'imagefx', effect: this.args.effect }, this.args.image, this.flags.output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
