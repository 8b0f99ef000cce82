import type { Page, UserSummary } from '../../../shared/types.js'
import { pageFlags, PlazaCommand, userArg, userRef } from '../../base.js'

export default class Following extends PlazaCommand<typeof Following> {
  static override description = 'Whom a user follows.'
  static override examples = ['<%= config.bin %> social following alice', '<%= config.bin %> social following 42 --page 2 --limit 50 --json']
  static override args = { user: userArg() }
  static override flags = { ...pageFlags }

  async run(): Promise<{ users: UserSummary[] } & Page> {
    const { trpc } = await this.client()
    const list = await trpc.users.following.query({ user_id: userRef(this.args.user), page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'users', ...list, empty: 'not following anyone yet' })
    return list
  }
}
