import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Block extends PlazaCommand<typeof Block> {
  static override description = 'Block a user: the follows between you go both ways, and neither of you sees the other anywhere (blocking twice changes nothing).'
  static override examples = ['<%= config.bin %> social block bob', '<%= config.bin %> social block 42 --json']
  static override args = { user: userArg() }

  async run(): Promise<{ user_id: number; is_blocked: boolean }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const state = await trpc.users.block.mutate({ user_id: userRef(this.args.user) })
    this.human(`blocked ${this.args.user}`)
    return state
  }
}
