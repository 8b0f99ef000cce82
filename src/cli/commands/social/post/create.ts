import { Args, Flags } from '@oclif/core'
import type { Post } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class PostCreate extends PlazaCommand<typeof PostCreate> {
  static override description = 'Publish a post: text with #hashtags, an image, or both (--image uploads it first).'
  static override examples = [
    '<%= config.bin %> social post create "Hello #plaza"',
    '<%= config.bin %> social post create "Sunset" --image ./sunset.jpg',
    '<%= config.bin %> social post create "Only for my followers" --private --json',
  ]
  static override args = { text: Args.string({ description: 'the post text (may be left out when there is an image)' }) }
  static override flags = {
    image: Flags.string({ char: 'i', description: 'image file to upload and attach' }),
    private: Flags.boolean({ description: 'only your followers can see it' }),
  }

  async run(): Promise<Post> {
    this.requireLogin()
    const image = this.flags.image === undefined ? undefined : (await this.upload('post', this.flags.image)).path
    const { trpc } = await this.client()
    const post = await trpc.posts.create.mutate({ content: this.args.text ?? '', image, is_public: !this.flags.private })
    await this.show({ kind: 'post', post })
    return post
  }
}
