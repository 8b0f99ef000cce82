import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Deny extends PlazaCommand<typeof Deny> {
  static override description = 'Deny a request to follow your private account (the requester is not told).'
  static override examples = ['<%= config.bin %> social deny bob', '<%= config.bin %> social deny 42 --json']
  static override args = { user: userArg('who asked: username or numeric id') }

  async run(): Promise<{ user_id: number; state: 'approved' | 'denied' }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.users.denyFollowRequest.mutate({ user_id: userRef(this.args.user) })
    this.human(`denied ${this.args.user}'s request`)
    return result
  }
}
