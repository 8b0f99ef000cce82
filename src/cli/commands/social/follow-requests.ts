import type { Page, UserSummary } from '../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../base.js'

export default class FollowRequests extends PlazaCommand<typeof FollowRequests> {
  static override description = 'Who asked to follow your private account, newest first (approve or deny each with `social approve` / `social deny`).'
  static override examples = ['<%= config.bin %> social follow-requests', '<%= config.bin %> social follow-requests --page 2 --json']
  static override flags = { ...pageFlags }

  async run(): Promise<{ users: UserSummary[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.users.followRequests.query({ page: this.flags.page, limit: this.flags.limit })
    await this.show({ kind: 'users', ...list, empty: 'no follow requests' })
    return list
  }
}
