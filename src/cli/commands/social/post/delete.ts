import { Args, Flags } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { confirmOrExit } from '../../../confirm.js'

export default class PostDelete extends PlazaCommand<typeof PostDelete> {
  static override description = 'Delete one of your posts, with its likes, comments and image (asks first on a terminal).'
  static override examples = ['<%= config.bin %> social post delete 12', '<%= config.bin %> social post delete 12 --yes --json']
  static override args = { id: Args.integer({ description: 'post id', required: true, min: 1 }) }
  static override flags = { yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation' }) }

  async run(): Promise<void> {
    this.requireLogin()
    await confirmOrExit({ yes: this.flags.yes, question: `Delete post ${this.args.id} with its likes and comments? [y/N] ` })
    const { trpc } = await this.client()
    await trpc.posts.delete.mutate({ post_id: this.args.id })
    this.human(`deleted post ${this.args.id}`)
    // The REST API answers a deletion with data: null.
    if (this.jsonEnabled()) this.logJson(null)
  }
}
