import { Args } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

export default class Bookmark extends PlazaCommand<typeof Bookmark> {
  static override description = 'Save a post to look at later (saving twice changes nothing); `social bookmarks` lists them.'
  static override examples = ['<%= config.bin %> social bookmark 12', '<%= config.bin %> social bookmark 12 --json']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }

  async run(): Promise<{ post_id: number; bookmarked: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.posts.bookmark.mutate({ post_id: this.args.id })
    this.human(`saved post ${result.post_id}`)
    return result
  }
}
