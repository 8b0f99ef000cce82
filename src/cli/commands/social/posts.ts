import type { Page, Post } from '../../../shared/types.js'
import { pageFlags, PlazaCommand, userArg, userRef } from '../../base.js'

export default class Posts extends PlazaCommand<typeof Posts> {
  static override description = "A user's posts, newest first."
  static override examples = ['<%= config.bin %> social posts alice', '<%= config.bin %> social posts 42 --page 2 --json']
  static override args = { user: userArg() }
  static override flags = { ...pageFlags }

  async run(): Promise<{ posts: Post[] } & Page> {
    const { trpc } = await this.client()
    const list = await trpc.posts.byUser.query({ user_id: userRef(this.args.user), page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'posts', ...list, empty: 'no posts yet' })
    return list
  }
}
