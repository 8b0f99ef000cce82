import { PlazaCommand } from '../../../base.js'

export default class PushKey extends PlazaCommand<typeof PushKey> {
  static override description = "The server's VAPID public key: what a browser or app subscribes with (PushManager.subscribe's applicationServerKey)."
  static override examples = ['<%= config.bin %> social push key', '<%= config.bin %> social push key --json']

  async run(): Promise<{ public_key: string }> {
    const { trpc } = await this.client()
    const key = await trpc.push.vapidKey.query()
    this.human(key.public_key)
    return key
  }
}
