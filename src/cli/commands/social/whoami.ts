import type { UserProfile } from '../../../shared/types.js'
import { PlazaCommand } from '../../base.js'

export default class Whoami extends PlazaCommand<typeof Whoami> {
  static override description = 'Show the profile of the logged-in user.'
  static override examples = ['<%= config.bin %> social whoami', '<%= config.bin %> social whoami --json --url http://127.0.0.1:8080']

  async run(): Promise<UserProfile> {
    this.requireLogin()
    const { trpc } = await this.client()
    const profile = await trpc.users.profile.query({})
    await this.show({ kind: 'profile', profile })
    return profile
  }
}
