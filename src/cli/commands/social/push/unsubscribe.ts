import { PlazaCommand } from '../../../base.js'

export default class PushUnsubscribe extends PlazaCommand<typeof PushUnsubscribe> {
  static override description = "Remove this session's push subscription (logging out removes it too)."
  static override examples = ['<%= config.bin %> social push unsubscribe']

  async run(): Promise<void> {
    this.requireLogin()
    const { trpc } = await this.client()
    await trpc.push.unsubscribe.mutate()
    this.human('unsubscribed')
    // The REST API answers data: null.
    if (this.jsonEnabled()) this.logJson(null)
  }
}
