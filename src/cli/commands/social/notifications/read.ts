import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class NotificationsRead extends PlazaCommand<typeof NotificationsRead> {
  static override description = 'Mark one notification read, or all of them without ID.'
  static override examples = ['<%= config.bin %> social notifications read', '<%= config.bin %> social notifications read 31']
  static override args = { id: Args.integer({ description: 'notification id (default: all)', min: 1 }) }

  async run(): Promise<{ updated: number }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.notifications.markRead.mutate(this.args.id === undefined ? {} : { notification_id: this.args.id })
    this.human(`marked ${result.updated} notification${result.updated === 1 ? '' : 's'} read`)
    return result
  }
}
