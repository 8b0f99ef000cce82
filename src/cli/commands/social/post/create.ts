import { Args, Flags } from '@oclif/core'
import type { Post } from '../../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../../base.js'

export default class PostCreate extends PlazaCommand<typeof PostCreate> {
  static override description =
    'Publish a post: text with #hashtags and @mentions, up to 10 images and videos (each --image is uploaded first, in order: a carousel), or both.'
  static override examples = [
    '<%= config.bin %> social post create "Hello #plaza"',
    '<%= config.bin %> social post create "Sunset" --image ./sunset.jpg',
    '<%= config.bin %> social post create "Our trip" --image a.jpg --image b.mp4 --alt "The harbour at dawn" --alt "Waves, filmed from the pier"',
    '<%= config.bin %> social post create "Only for my followers" --private --json',
  ]
  static override args = { text: Args.string({ description: 'the post text (may be left out when there is an image)' }) }
  static override flags = {
    image: Flags.string({ char: 'i', description: 'image or video file to upload and attach; repeat for a carousel (up to 10)', multiple: true }),
    alt: Flags.string({ description: 'alt text for the --image of the same rank (screen readers read it); repeat for each', multiple: true }),
    private: Flags.boolean({ description: 'only your followers can see it' }),
  }

  async run(): Promise<Post> {
    const files = this.flags.image ?? []
    const alts = this.flags.alt ?? []
    if (files.length > 10) throw new UsageError('at most 10 --image per post')
    if (alts.length > files.length) throw new UsageError(`${alts.length} --alt for ${files.length} --image: give one --alt per image, in the same order`)
    this.requireLogin()
    const paths: string[] = []
    for (const file of files) paths.push((await this.upload('post', file)).path)
    const { trpc } = await this.client()
    // One image without alt text is the spec's `image`; anything more is a carousel.
    const media = paths.length > 1 || alts.length > 0 ? paths.map((path, i) => ({ path, alt: alts[i] ?? '' })) : undefined
    const post = await trpc.posts.create.mutate({ content: this.args.text ?? '', image: media ? undefined : paths[0], media, is_public: !this.flags.private })
    await this.show({ kind: 'post', post })
    return post
  }
}
