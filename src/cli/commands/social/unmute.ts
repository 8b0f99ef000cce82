import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Unmute extends PlazaCommand<typeof Unmute> {
  static override description = 'Unmute a user: their posts come back to your feed if you follow them.'
  static override examples = ['<%= config.bin %> social unmute bob', '<%= config.bin %> social unmute 42 --json']
  static override args = { user: userArg() }

  async run(): Promise<{ user_id: number; is_muted: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const state = await trpc.users.unmute.mutate({ user_id: userRef(this.args.user) })
    this.human(`unmuted ${this.args.user}`)
    return state
  }
}
