import { Args, Flags } from '@oclif/core'
import type { LensAnswer } from '../../../shared/schemas/searchops.js'
import { PlazaCommand } from '../../base.js'

export default class UtilLens extends PlazaCommand<typeof UtilLens> {
  static override description = `Pages related to an image, from an image-search provider (GET /api/lens, SerpApi's Google Lens protocol; docs/search.md).

IMAGE_URL is a public http(s) URL: the provider fetches it. Without --url, the lens provider of this environment (PLAZA_LENS_API_KEY); with --url, the server's.`
  static override examples = ['<%= config.bin %> util lens https://upload.wikimedia.org/wikipedia/commons/0/0c/GoldenGateBridge-001.jpg', '<%= config.bin %> util lens https://example.com/cat.jpg --limit 5 --json']
  static override args = {
    image: Args.string({ description: 'public http(s) URL of the image', required: true }),
  }
  static override flags = {
    limit: Flags.string({ char: 'n', description: 'how many matches, 1 to 50 (default 10)' }),
  }

  async run(): Promise<LensAnswer> {
    const { formatLens, runLens } = await import('../../searchops.js')
    const answer = await runLens(this.target, { url: this.args.image, limit: this.flags.limit })
    this.human(formatLens(answer))
    return answer
  }
}
