import { Args, Flags } from '@oclif/core'
import type { ClipsAnswer } from '../../../shared/schemas/searchops.js'
import { PlazaCommand } from '../../base.js'

export default class UtilClips extends PlazaCommand<typeof UtilClips> {
  static override description = `Video clips matching a search text (GET /api/clips, Invidious API or YouTube Data API v3; docs/search.md).

Without --url, the clips provider of this environment (PLAZA_CLIPS_BASE_URL); with --url, the server's.`
  static override examples = ['<%= config.bin %> util clips "sourdough starter"', '<%= config.bin %> util clips "lofi" --limit 3 --json --url http://127.0.0.1:8080']
  static override args = {
    query: Args.string({ description: 'what to search for', required: true }),
  }
  static override flags = {
    limit: Flags.string({ char: 'n', description: 'how many clips, 1 to 20 (default 10)' }),
  }

  async run(): Promise<ClipsAnswer> {
    const { formatClips, runClips } = await import('../../searchops.js')
    const answer = await runClips(this.target, { q: this.args.query, limit: this.flags.limit })
    this.human(formatClips(answer))
    return answer
  }
}
