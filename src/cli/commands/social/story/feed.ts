import type { StoryFeedGroup } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class StoryFeed extends PlazaCommand<typeof StoryFeed> {
  static override description = 'Active stories of the people you follow (and yours), grouped by author.'
  static override examples = ['<%= config.bin %> social story feed', '<%= config.bin %> social story feed --json']

  async run(): Promise<StoryFeedGroup[]> {
    this.requireLogin()
    const { trpc } = await this.client()
    const groups = await trpc.stories.feed.query()
    await this.show({ kind: 'storyFeed', groups })
    return groups
  }
}
