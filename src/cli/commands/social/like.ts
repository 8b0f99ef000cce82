import { Args } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

export interface LikeResult {
  post_id: number
  likes_count: number
  user_liked: boolean
}

export default class Like extends PlazaCommand<typeof Like> {
  static override description = 'Like a post (liking twice changes nothing).'
  static override examples = ['<%= config.bin %> social like 12']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }

  async run(): Promise<LikeResult> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.interactions.like.mutate({ post_id: this.args.id })
    this.human(`liked post ${result.post_id} · ${result.likes_count} like${result.likes_count === 1 ? '' : 's'}`)
    return result
  }
}
