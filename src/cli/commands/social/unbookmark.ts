import { Args } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

export default class Unbookmark extends PlazaCommand<typeof Unbookmark> {
  static override description = 'Take a post out of your saved ones.'
  static override examples = ['<%= config.bin %> social unbookmark 12']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }

  async run(): Promise<{ post_id: number; bookmarked: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.posts.unbookmark.mutate({ post_id: this.args.id })
    this.human(`unsaved post ${result.post_id}`)
    return result
  }
}
