import type { Page, Post } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Bookmarks extends PlazaCommand<typeof Bookmarks> {
  static override description = 'Your saved posts, newest saved first (only you see them).'
  static override examples = ['<%= config.bin %> social bookmarks', '<%= config.bin %> social bookmarks --page 2 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ posts: Post[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.posts.bookmarks.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'posts', ...list, empty: 'no saved posts: save one with `plaza social bookmark ID`' })
    return list
  }
}
