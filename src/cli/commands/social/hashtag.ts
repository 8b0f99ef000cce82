import { Args } from '@oclif/core'
import type { Page, Post } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Hashtag extends PlazaCommand<typeof Hashtag> {
  static override description = "A hashtag's public posts, newest first (no login needed)."
  static override examples = ['<%= config.bin %> social hashtag sunset', '<%= config.bin %> social hashtag "#Sunset" --page 2 --json']
  static override args = { tag: Args.string({ description: 'the hashtag (the # is optional)', required: true }) }
  static override flags = { ...pageFlags }

  async run(): Promise<{ tag: string; posts_count: number; posts: Post[] } & Page> {
    const { trpc } = await this.client()
    const page = await trpc.posts.hashtag.query({ tag: this.args.tag, page: this.flags.page, limit: this.flags.limit })
    this.human(`#${page.tag} · ${page.posts_count} post${page.posts_count === 1 ? '' : 's'}\n`)
    await this.show({ kind: 'posts', posts: page.posts, page: page.page, has_more: page.has_more, empty: `no posts with #${page.tag}` })
    return page
  }
}
