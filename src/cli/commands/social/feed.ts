import type { Page, Post } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Feed extends PlazaCommand<typeof Feed> {
  static override description = 'Your feed: posts of the people you follow and your own, newest first.'
  static override examples = ['<%= config.bin %> social feed', '<%= config.bin %> social feed --page 2 --limit 10 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ posts: Post[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const feed = await trpc.posts.feed.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'posts', ...feed, empty: 'your feed is empty: follow someone (plaza social follow USER) or post something' })
    return feed
  }
}
