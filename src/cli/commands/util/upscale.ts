import { Args, Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'
import type { ImageCommandOutput } from '../../imaging.js'

export default class UtilUpscale extends PlazaCommand<typeof UtilUpscale> {
  static override description = `Upscale an image 2x or 4x with lanczos3 resampling and mild sharpening, at most 8192 px a side (GET /api/upscale).

IMAGE is a local file, an http(s) URL, or an uploads/... path of the server. With --url the server does the work (a local file is sent to it as a form); without, it runs here.`
  static override examples = ['<%= config.bin %> util upscale icon.png', '<%= config.bin %> util upscale photo.jpg --scale 4 -o big.jpg --json']
  static override args = {
    image: Args.string({ description: 'local file, http(s) URL or uploads/... path', required: true }),
  }
  static override flags = {
    scale: Flags.string({ char: 's', description: 'how many times larger', options: ['2', '4'], default: '2' }),
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: <name>-<scale>x.png or .jpg' }),
  }

  async run(): Promise<ImageCommandOutput> {
    const { runImageCommand } = await import('../../imaging.js')
    const result = await runImageCommand(this.target, () => this.client(), { kind: 'upscale', scale: this.flags.scale }, this.args.image, this.flags.output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
