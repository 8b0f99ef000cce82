import { Args, Flags } from '@oclif/core'
import type { Post } from '../../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../../base.js'

export default class PostEdit extends PlazaCommand<typeof PostEdit> {
  static override description = "Edit one of your posts: its text, who can see it, or its images' alt text."
  static override examples = [
    '<%= config.bin %> social post edit 12 "Sunset over the bay #sky"',
    '<%= config.bin %> social post edit 12 --private',
    '<%= config.bin %> social post edit 12 "For everyone now" --public --json',
    '<%= config.bin %> social post edit 12 --alt "A red kite over the hill" --alt "The same kite, landing"',
  ]
  static override args = {
    id: Args.integer({ description: 'post id', required: true, min: 1 }),
    text: Args.string({ description: 'the new text (leave out to keep it)' }),
  }
  static override flags = {
    public: Flags.boolean({ description: 'everyone can see it', exclusive: ['private'] }),
    private: Flags.boolean({ description: 'only your followers can see it', exclusive: ['public'] }),
    alt: Flags.string({ description: "new alt text for the post's image or video of the same rank; repeat for each (the others keep theirs)", multiple: true }),
  }

  async run(): Promise<Post> {
    const isPublic = this.flags.public ? true : this.flags.private ? false : undefined
    const alts = this.flags.alt
    if (this.args.text === undefined && isPublic === undefined && alts === undefined) throw new UsageError('nothing to change: give the new text, --public, --private or --alt')
    this.requireLogin()
    const { trpc } = await this.client()
    let media: Array<{ path: string; alt: string }> | undefined
    if (alts) {
      // The uploads stay as they are: only their alt text changes, so the edit names them in order.
      const { post } = await trpc.posts.detail.query({ post_id: this.args.id, limit: 1 })
      if (alts.length > post.media.length) throw new UsageError(`${alts.length} --alt for a post with ${post.media.length} image${post.media.length === 1 ? '' : 's'} or video${post.media.length === 1 ? '' : 's'}`)
      media = post.media.map((item, i) => ({ path: item.path, alt: alts[i] ?? item.alt }))
    }
    const post = await trpc.posts.edit.mutate({ post_id: this.args.id, content: this.args.text, is_public: isPublic, media })
    await this.show({ kind: 'post', post })
    return post
  }
}
