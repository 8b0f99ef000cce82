import { Flags } from '@oclif/core'
import type { Notification, Page } from '../../../../shared/types.js'
import { pageFlags, PlazaCommand } from '../../../base.js'

export default class Notifications extends PlazaCommand<typeof Notifications> {
  static override description = 'Your notifications, newest first (• marks unread); with --follow, new ones as they arrive.'
  static override examples = [
    '<%= config.bin %> social notifications',
    '<%= config.bin %> social notifications --unread --json',
    '<%= config.bin %> social notifications --follow',
    '<%= config.bin %> social notifications --follow --json --url http://127.0.0.1:8080',
  ]
  static override flags = {
    unread: Flags.boolean({ description: 'only unread ones' }),
    ...pageFlags,
    follow: Flags.boolean({
      char: 'f',
      description: 'keep running and print each new notification as it arrives, until Ctrl-C (--json: one JSON object per line)',
      exclusive: ['unread', 'page', 'limit'],
    }),
  }

  async run(): Promise<({ notifications: Notification[] } & Page) | undefined> {
    this.requireLogin()
    if (this.flags.follow) return this.follow()
    const { trpc } = await this.client()
    const list = await trpc.notifications.list.query({ page: this.flags.page, limit: this.flags.limit, unread_only: this.flags.unread })
    await this.show({ kind: 'notifications', ...list })
    return list
  }

  /** Prints notifications as they arrive until SIGINT/SIGTERM, then exits 0; lines, not one JSON document. */
  private async follow(): Promise<undefined> {
    const [client, { followNotifications }, { viewText }] = await Promise.all([this.client(), import('../../../notification-follow.js'), import('../../../ui/format.js')])
    const stop = new AbortController()
    const interrupt = () => stop.abort()
    process.once('SIGINT', interrupt)
    process.once('SIGTERM', interrupt)
    this.chatter('waiting for notifications (Ctrl-C to stop)')
    // Lines leave in order, each through --jq when given.
    let written = Promise.resolve()
    try {
      await followNotifications(client, this.token()!, stop.signal, {
        notification: (notification) => {
          if (this.jsonEnabled()) written = written.then(() => this.writeJsonLine(notification))
          else this.log(viewText({ kind: 'notifications', notifications: [notification] }))
        },
        reconnecting: (delayMs, reason) => this.chatter(`connection lost (${reason}); reconnecting in ${Math.ceil(delayMs / 1000)} s`),
      })
    } finally {
      process.off('SIGINT', interrupt)
      process.off('SIGTERM', interrupt)
    }
    await written
    return undefined
  }
}
