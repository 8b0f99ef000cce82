import type { UserProfile } from '../../../shared/types.js'
import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Unfollow extends PlazaCommand<typeof Unfollow> {
  static override description = 'Stop following a user.'
  static override examples = ['<%= config.bin %> social unfollow bob']
  static override args = { user: userArg() }

  async run(): Promise<UserProfile> {
    this.requireLogin()
    const { trpc } = await this.client()
    const profile = await trpc.users.unfollow.mutate({ user_id: userRef(this.args.user) })
    this.human(`no longer following @${profile.username}`)
    await this.show({ kind: 'profile', profile })
    return profile
  }
}
