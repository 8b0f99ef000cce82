import { Args, Flags } from '@oclif/core'
import { PlazaCommand, UsageError } from '../../../base.js'
import { promptPassword, readPasswordFromStdin } from '../../../password.js'

export default class PasswordReset extends PlazaCommand<typeof PasswordReset> {
  static override description = 'Set a new password with the code of a reset mail (`plaza social password forgot`). Every session of the account is logged out.'
  static override examples = [
    '<%= config.bin %> social password reset Xk9fQ2...',
    'printf %s "$NEW_PASSWORD" | <%= config.bin %> social password reset Xk9fQ2... --password-stdin',
  ]

  static override args = { token: Args.string({ description: 'the code from the mail (the token= of its link)', required: true }) }
  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the new password from stdin instead of prompting' }) }

  async run(): Promise<{ revoked_sessions: number }> {
    const password = this.flags['password-stdin'] ? await readPasswordFromStdin() : await this.prompt()
    const { trpc } = await this.client()
    const result = await trpc.auth.resetPassword.mutate({ token: this.args.token, password })
    this.human(`password reset; ${result.revoked_sessions} session${result.revoked_sessions === 1 ? '' : 's'} logged out: log in with the new password`)
    return result
  }

  private async prompt(): Promise<string> {
    const next = await promptPassword('New password: ')
    if ((await promptPassword('New password again: ')) !== next) throw new UsageError('the passwords do not match; nothing was changed')
    return next
  }
}
