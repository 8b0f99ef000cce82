import { Args } from '@oclif/core'
import type { UserProfile } from '../../../../shared/types.js'
import { PlazaCommand, userRef } from '../../../base.js'

export default class Profile extends PlazaCommand<typeof Profile> {
  static override description = "Show a user's profile (your own without USER)."
  static override examples = ['<%= config.bin %> social profile', '<%= config.bin %> social profile alice', '<%= config.bin %> social profile 42 --json']

  static override args = {
    user: Args.string({ description: 'username or numeric id (default: you)' }),
  }

  async run(): Promise<UserProfile> {
    this.requireLogin()
    const { trpc } = await this.client()
    const profile = await trpc.users.profile.query(this.args.user === undefined ? {} : { user_id: userRef(this.args.user) })
    await this.show({ kind: 'profile', profile })
    return profile
  }
}
