import { PlazaCommand, userArg, userRef } from '../../base.js'

export default class Approve extends PlazaCommand<typeof Approve> {
  static override description = 'Approve a request to follow your private account: the requester then follows you.'
  static override examples = ['<%= config.bin %> social approve bob', '<%= config.bin %> social approve 42 --json']
  static override args = { user: userArg('who asked: username or numeric id') }

  async run(): Promise<{ user_id: number; state: 'approved' | 'denied' }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.users.approveFollowRequest.mutate({ user_id: userRef(this.args.user) })
    this.human(`${this.args.user} now follows you`)
    return result
  }
}
