import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Unblock extends PlazaCommand<typeof Unblock> {
  static override description = 'Lift your block of a user (follows it removed stay removed).'
  static override examples = ['<%= config.bin %> social unblock bob', '<%= config.bin %> social unblock 42 --json']
  static override args = { user: userArg() }

  async run(): Promise<{ user_id: number; is_blocked: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const state = await trpc.users.unblock.mutate({ user_id: userRef(this.args.user) })
    this.human(`unblocked ${this.args.user}`)
    return state
  }
}
