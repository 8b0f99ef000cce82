import { Args, Flags } from '@oclif/core'
import type { Post } from '../../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../../base.js'

export default class PostEdit extends PlazaCommand<typeof PostEdit> {
  static override description = 'Edit one of your posts: its text, who can see it, or both.'
  static override examples = [
    '<%= config.bin %> social post edit 12 "Sunset over the bay #sky"',
    '<%= config.bin %> social post edit 12 --private',
    '<%= config.bin %> social post edit 12 "For everyone now" --public --json',
  ]
  static override args = {
    id: Args.integer({ description: 'post id', required: true, min: 1 }),
    text: Args.string({ description: 'the new text (leave out to keep it)' }),
  }
  static override flags = {
    public: Flags.boolean({ description: 'everyone can see it', exclusive: ['private'] }),
    private: Flags.boolean({ description: 'only your followers can see it', exclusive: ['public'] }),
  }

  async run(): Promise<Post> {
    const isPublic = this.flags.public ? true : this.flags.private ? false : undefined
    if (this.args.text === undefined && isPublic === undefined) throw new UsageError('nothing to change: give the new text, --public or --private')
    this.requireLogin()
    const { trpc } = await this.client()
    const post = await trpc.posts.edit.mutate({ post_id: this.args.id, content: this.args.text, is_public: isPublic })
    await this.show({ kind: 'post', post })
    return post
  }
}
