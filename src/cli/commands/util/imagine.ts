import { Args, Flags } from '@oclif/core'
import { DEFAULT_IMAGE_MODEL, IMAGE_MODEL_ALIASES } from '../../../shared/schemas/images.js'
import { PlazaCommand } from '../../base.js'
import type { ImagineCommandOutput } from '../../providers.js'

export default class UtilImagine extends PlazaCommand<typeof UtilImagine> {
  static override description = `Generate an image from a prompt (GET /api/imagine) with one of eleven model aliases (docs/images.md).

With --url the server's image provider draws it; without, the provider configured in this environment (PLAZA_IMAGES_BASE_URL, or services.images of PLAZA_LLM_CONFIG; docs/providers.md) is called from here.

Models: ${IMAGE_MODEL_ALIASES.join(', ')} (default ${DEFAULT_IMAGE_MODEL}).`
  static override examples = [
    '<%= config.bin %> util imagine "a lighthouse at dusk"',
    '<%= config.bin %> util imagine "a red fox in snow" --model sdxl --size 1024x768 -o fox.png',
    '<%= config.bin %> util imagine "a castle" --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    prompt: Args.string({ description: 'what to draw', required: true }),
  }
  static override flags = {
    model: Flags.string({ char: 'm', description: `model alias (default ${DEFAULT_IMAGE_MODEL})` }),
    size: Flags.string({ char: 's', description: 'WxH such as 1024x1024 (default: the provider’s)' }),
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: imagine-<prompt>.png' }),
  }

  async run(): Promise<ImagineCommandOutput> {
    const { runImagine } = await import('../../providers.js')
    const result = await runImagine(this.target, { prompt: this.args.prompt, model: this.flags.model, size: this.flags.size }, this.flags.output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
