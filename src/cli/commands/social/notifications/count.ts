import { PlazaCommand } from '../../../base.js'

export default class NotificationsCount extends PlazaCommand<typeof NotificationsCount> {
  static override description = 'How many unread notifications you have.'
  static override examples = ['<%= config.bin %> social notifications count', '<%= config.bin %> social notifications count --json']

  async run(): Promise<{ count: number }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.notifications.count.query()
    this.human(String(result.count))
    return result
  }
}
