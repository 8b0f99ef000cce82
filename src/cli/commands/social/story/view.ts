import { Args } from '@oclif/core'
import type { Story } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class StoryView extends PlazaCommand<typeof StoryView> {
  static override description = "Open a story (records your view and tells its author)."
  static override examples = ['<%= config.bin %> social story view 7', '<%= config.bin %> social story view 7 --json']
  static override args = { id: Args.integer({ description: 'story id', required: true, min: 1 }) }

  async run(): Promise<Story> {
    this.requireLogin()
    const { trpc } = await this.client()
    const story = await trpc.stories.view.mutate({ story_id: this.args.id })
    await this.show({ kind: 'story', story })
    return story
  }
}
