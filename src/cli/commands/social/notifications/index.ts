import { Flags } from '@oclif/core'
import type { Notification, Page } from '../../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../../base.js'

export default class Notifications extends PlazaCommand<typeof Notifications> {
  static override description = 'Your notifications, newest first (• marks unread).'
  static override examples = ['<%= config.bin %> social notifications', '<%= config.bin %> social notifications --unread --json']
  static override flags = {
    unread: Flags.boolean({ description: 'only unread ones' }),
    ...pageFlags,
  }

  async run(): Promise<{ notifications: Notification[] } & Page> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.notifications.list.query({ page: this.flags.page, limit: this.flags.limit, unread_only: this.flags.unread })
    await this.show({ kind: 'notifications', ...list })
    return list
  }
}
