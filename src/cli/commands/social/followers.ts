import type { Page, UserSummary } from '../../../shared/types.js'
import { pageFlags, PlazaCommand, userArg, userRef } from '../../base.js'

export default class Followers extends PlazaCommand<typeof Followers> {
  static override description = 'Who follows a user.'
  static override examples = ['<%= config.bin %> social followers alice', '<%= config.bin %> social followers 42 --page 2 --limit 50 --json']
  static override args = { user: userArg() }
  static override flags = { ...pageFlags }

  async run(): Promise<{ users: UserSummary[] } & Page> {
    const { trpc } = await this.client()
    const list = await trpc.users.followers.query({ user_id: userRef(this.args.user), page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'users', ...list, empty: 'no followers yet' })
    return list
  }
}
