import type { Page, Post } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Explore extends PlazaCommand<typeof Explore> {
  static override description = 'Popular public posts (no login needed).'
  static override examples = ['<%= config.bin %> social explore', '<%= config.bin %> social explore --limit 5 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ posts: Post[] } & Page> {
    const { trpc } = await this.client()
    const list = await trpc.posts.explore.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'posts', ...list, empty: 'nothing to explore yet' })
    return list
  }
}
