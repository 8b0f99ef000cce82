import type { Page, UserSummary } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class Muted extends PlazaCommand<typeof Muted> {
  static override description = 'The users you muted, most recent first.'
  static override examples = ['<%= config.bin %> social muted', '<%= config.bin %> social muted --page 2 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ users: UserSummary[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.users.muted.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'users', ...list, empty: 'you have muted no one' })
    return list
  }
}
