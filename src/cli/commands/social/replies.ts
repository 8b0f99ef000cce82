import { Args } from '@oclif/core'
import type { Comment, Page } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Replies extends PlazaCommand<typeof Replies> {
  static override description = "A page of a comment's replies, oldest first (`social post show` shows each comment's first ones)."
  static override examples = ['<%= config.bin %> social replies 345', '<%= config.bin %> social replies 345 --page 2 --json']
  static override args = { id: Args.integer({ description: 'comment id', required: true, min: 1 }) }
  static override flags = { ...pageFlags }

  async run(): Promise<{ replies: Comment[] } & Page> {
    const { trpc } = await this.client()
    const list = await trpc.interactions.replies.query({ comment_id: this.args.id, page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'comments', comments: list.replies, page: list.page, has_more: list.has_more, empty: 'no replies' })
    return list
  }
}
