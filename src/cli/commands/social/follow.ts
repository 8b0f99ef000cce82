import type { UserProfile } from '../../../shared/types.js'
import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Follow extends PlazaCommand<typeof Follow> {
  static override description = 'Follow a user (following twice changes nothing); a private account is asked, and its owner approves.'
  static override examples = ['<%= config.bin %> social follow bob', '<%= config.bin %> social follow 42 --json']
  static override args = { user: userArg() }

  async run(): Promise<UserProfile> {
    this.requireLogin()
    const { trpc } = await this.client()
    const profile = await trpc.users.follow.mutate({ user_id: userRef(this.args.user) })
    this.human(profile.follow_requested ? `asked to follow @${profile.username} (a private account): waiting for approval` : `following @${profile.username}`)
    await this.show({ kind: 'profile', profile })
    return profile
  }
}
