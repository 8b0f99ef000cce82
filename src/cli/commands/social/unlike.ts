import { Args } from '@oclif/core'
import { PlazaCommand } from '../../base.js'
import type { LikeResult } from './like.js'

export default class Unlike extends PlazaCommand<typeof Unlike> {
  static override description = 'Take back a like.'
  static override examples = ['<%= config.bin %> social unlike 12']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }

  async run(): Promise<LikeResult> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.interactions.unlike.mutate({ post_id: this.args.id })
    this.human(`unliked post ${result.post_id} · ${result.likes_count} like${result.likes_count === 1 ? '' : 's'}`)
    return result
  }
}
