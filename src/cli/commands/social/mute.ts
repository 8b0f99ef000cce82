import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Mute extends PlazaCommand<typeof Mute> {
  static override description = 'Mute a user: their posts and stories leave your feed and story feed; nothing else changes and they are not told.'
  static override examples = ['<%= config.bin %> social mute bob', '<%= config.bin %> social mute 42 --json']
  static override args = { user: userArg() }

  async run(): Promise<{ user_id: number; is_muted: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const state = await trpc.users.mute.mutate({ user_id: userRef(this.args.user) })
    this.human(`muted ${this.args.user}`)
    return state
  }
}
