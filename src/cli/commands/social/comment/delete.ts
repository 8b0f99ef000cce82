import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class CommentDelete extends PlazaCommand<typeof CommentDelete> {
  static override description = 'Delete a comment: one of yours, or any comment on your posts.'
  static override examples = ['<%= config.bin %> social comment delete 31', '<%= config.bin %> social comment delete 31 --json']
  static override args = { id: Args.integer({ description: 'comment id', required: true, min: 1 }) }

  async run(): Promise<void> {
    this.requireLogin()
    const { trpc } = await this.client()
    await trpc.interactions.deleteComment.mutate({ comment_id: this.args.id })
    this.human(`deleted comment ${this.args.id}`)
    if (this.jsonEnabled()) this.logJson(null)
  }
}
