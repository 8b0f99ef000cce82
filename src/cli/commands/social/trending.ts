import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

export interface TrendingResult {
  hashtags: Array<{ tag: string; posts_count: number; recent_authors: number }>
}

export default class Trending extends PlazaCommand<typeof Trending> {
  static override description = 'Hashtags trending now: used lately by the most accounts (no login needed).'
  static override examples = ['<%= config.bin %> social trending', '<%= config.bin %> social trending --limit 5 --json']
  static override flags = { limit: Flags.integer({ description: 'how many (at most 50)', min: 1 }) }

  async run(): Promise<TrendingResult> {
    const { trpc } = await this.client()
    const result = await trpc.search.trending.query({ limit: this.flags.limit })
    this.human(result.hashtags.length ? result.hashtags.map((h, i) => `${i + 1}. #${h.tag} · ${h.recent_authors} accounts lately · ${h.posts_count} posts`).join('\n') : 'nothing is trending yet')
    return result
  }
}
