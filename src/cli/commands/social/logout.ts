import { isTRPCClientError } from '@trpc/client'
import { PlazaCommand } from '../../base.js'

export default class Logout extends PlazaCommand<typeof Logout> {
  static override description = 'Log out: revoke the session on the server and forget the account here (another kept account becomes active).'
  static override examples = [
    '<%= config.bin %> social logout',
    '<%= config.bin %> social logout --as bob',
    '<%= config.bin %> social logout --url http://127.0.0.1:8080',
  ]

  async run(): Promise<void> {
    this.requireLogin()
    const token = this.token()
    const { trpc } = await this.client()
    let alreadyInvalid = false
    try {
      await trpc.auth.logout.mutate()
    } catch (error) {
      // An expired or revoked token is as logged out as it gets: still forget it locally.
      if (!(isTRPCClientError(error) && (error.data as { code?: string } | undefined)?.code === 'UNAUTHORIZED')) throw error
      alreadyInvalid = true
    }
    // Forget the kept account only if it holds the token just revoked (PLAZA_TOKEN may name another).
    const active = this.forgetSession(token)
    const done = alreadyInvalid ? 'the session had already expired or been revoked; forgotten here' : 'logged out'
    this.human(active ? `${done}; @${active} is now the active account` : done)
    // The REST API answers logout with data: null.
    if (this.jsonEnabled()) this.logJson(null)
  }
}
