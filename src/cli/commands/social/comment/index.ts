import { Args, Flags } from '@oclif/core'
import type { Comment as CommentData } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class Comment extends PlazaCommand<typeof Comment> {
  static override description = 'Comment on a post, optionally with an image, or reply to one of its comments (--reply-to).'
  static override examples = [
    '<%= config.bin %> social comment 12 "Lovely #sunset"',
    '<%= config.bin %> social comment 12 "Look" --image ./photo.jpg',
    '<%= config.bin %> social comment 12 "Agreed" --reply-to 345',
  ]
  static override args = {
    id: Args.integer({ description: 'post id', required: true, min: 1 }),
    text: Args.string({ description: 'the comment', required: true }),
  }
  static override flags = {
    image: Flags.string({ char: 'i', description: 'image file to upload and attach' }),
    'reply-to': Flags.integer({ char: 'r', description: 'the id of the comment to reply to (a reply to a reply joins its thread)', min: 1 }),
  }

  async run(): Promise<CommentData> {
    this.requireLogin()
    const image = this.flags.image === undefined ? undefined : (await this.upload('comment', this.flags.image)).path
    const { trpc } = await this.client()
    const comment = await trpc.interactions.comment.mutate({ post_id: this.args.id, content: this.args.text, image, parent_id: this.flags['reply-to'] })
    this.human(comment.parent_id === null ? `commented on post ${this.args.id} (comment ${comment.id})` : `replied under comment ${comment.parent_id} (comment ${comment.id})`)
    return comment
  }
}
