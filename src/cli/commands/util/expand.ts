import { Args, Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'
import type { ImageCommandOutput } from '../../imaging.js'

export default class UtilExpand extends PlazaCommand<typeof UtilExpand> {
  static override description = `Expand an image to a ratio, the original centred over a blurred, darkened fill of itself (GET /api/diffuser/expand).

IMAGE is a local file, an http(s) URL, or an uploads/... path of the server. With --url the server does the work (a local file is sent to it as a form); without, it runs here.`
  static override examples = ['<%= config.bin %> util expand photo.jpg 16:9', '<%= config.bin %> util expand portrait.png 1 -o square.png --json']
  static override args = {
    image: Args.string({ description: 'local file, http(s) URL or uploads/... path', required: true }),
    ratio: Args.string({ description: 'W:H such as 16:9, or a number such as 1.5 (1:10 to 10:1)', required: true }),
  }
  static override flags = {
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: <name>-<W>x<H>.png or .jpg' }),
  }

  async run(): Promise<ImageCommandOutput> {
    const { runImageCommand } = await import('../../imaging.js')
    const result = await runImageCommand(this.target, () => this.client(), { kind: 'expand', ratio: this.args.ratio }, this.args.image, this.flags.output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
