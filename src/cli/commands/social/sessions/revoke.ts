import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class SessionsRevoke extends PlazaCommand<typeof SessionsRevoke> {
  static override description = 'Log out one of your sessions by id (from `plaza social sessions`); revoking this one logs you out here.'
  static override examples = ['<%= config.bin %> social sessions revoke 14']
  static override args = { id: Args.integer({ description: 'session id', required: true, min: 1 }) }

  async run(): Promise<void> {
    this.requireLogin()
    const token = this.token()
    const { trpc } = await this.client()
    const { sessions } = await trpc.auth.sessions.query()
    const current = sessions.some((session) => session.id === this.args.id && session.current)
    await trpc.auth.revokeSession.mutate({ id: this.args.id })
    // The stored session is forgotten only if it is the one revoked (PLAZA_TOKEN may name another).
    if (current) this.forgetSession(token)
    this.human(current ? `revoked session ${this.args.id} (this one): logged out` : `revoked session ${this.args.id}`)
    if (this.jsonEnabled()) this.logJson(null)
  }
}
