import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class StoryDelete extends PlazaCommand<typeof StoryDelete> {
  static override description = 'Delete one of your stories (an expired one too), with its views and media.'
  static override examples = ['<%= config.bin %> social story delete 7', '<%= config.bin %> social story delete 7 --json']
  static override args = { id: Args.integer({ description: 'story id', required: true, min: 1 }) }

  async run(): Promise<void> {
    this.requireLogin()
    const { trpc } = await this.client()
    await trpc.stories.delete.mutate({ story_id: this.args.id })
    this.human(`deleted story ${this.args.id}`)
    if (this.jsonEnabled()) this.logJson(null)
  }
}
