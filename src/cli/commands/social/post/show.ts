import { Args } from '@oclif/core'
import type { CommentThread, Post } from '../../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../../base.js'

export default class PostShow extends PlazaCommand<typeof PostShow> {
  static override description = 'Show a post with its comments, each with its first replies.'
  static override examples = ['<%= config.bin %> social post show 12', '<%= config.bin %> social post show 12 --page 2 --json']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }
  static override flags = { ...pageFlags }

  async run(): Promise<{ post: Post; comments: CommentThread[] }> {
    const { trpc } = await this.client()
    const detail = await trpc.posts.detail.query({ post_id: this.args.id, page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'post', post: detail.post, comments: detail.comments })
    return detail
  }
}
