import { Args, Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

const TYPES = ['all', 'users', 'posts', 'hashtags'] as const

export default class Search extends PlazaCommand<typeof Search> {
  static override description = 'Search users, posts and hashtags (at least 2 characters).'
  static override examples = [
    '<%= config.bin %> social search alice',
    '<%= config.bin %> social search "#sunset" --type posts',
    '<%= config.bin %> social search sun --type hashtags --limit 5 --json',
  ]
  static override args = { query: Args.string({ description: 'what to look for', required: true }) }
  static override flags = {
    type: Flags.string({ char: 't', description: 'what to search', options: [...TYPES], default: 'all' }),
    limit: Flags.integer({ description: 'results per kind (default 10, at most 50)', min: 1 }),
  }

  async run(): Promise<object> {
    const { trpc } = await this.client()
    const input = { q: this.args.query, limit: this.flags.limit }
    const type = this.flags.type as (typeof TYPES)[number]
    const result =
      type === 'users'
        ? await trpc.search.users.query(input)
        : type === 'posts'
          ? await trpc.search.posts.query(input)
          : type === 'hashtags'
            ? await trpc.search.hashtags.query(input)
            : await trpc.search.all.query(input)
    await this.show({ kind: 'search', ...result })
    return result
  }
}
