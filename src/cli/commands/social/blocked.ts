import type { Page, UserSummary } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Blocked extends PlazaCommand<typeof Blocked> {
  static override description = 'The users you blocked, most recent first.'
  static override examples = ['<%= config.bin %> social blocked', '<%= config.bin %> social blocked --page 2 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ users: UserSummary[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.users.blocked.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'users', ...list, empty: 'you have blocked no one' })
    return list
  }
}
