import { Flags } from '@oclif/core'
import { PlazaCommand, UsageError } from '../../../base.js'
import { promptPassword, readPasswordsFromStdin } from '../../../password.js'

export default class Password extends PlazaCommand<typeof Password> {
  static override description = 'Change your password; every other session is logged out, this one stays.'
  static override examples = [
    '<%= config.bin %> social password',
    `printf '%s\\n' "$OLD" "$NEW" | <%= config.bin %> social password --password-stdin`,
  ]
  static override flags = {
    'password-stdin': Flags.boolean({ description: 'read the current password, then the new one, one a line, from stdin' }),
  }

  async run(): Promise<{ revoked_sessions: number }> {
    this.requireLogin()
    const [current, next] = this.flags['password-stdin'] ? await readPasswordsFromStdin(2) : await this.prompt()
    const { trpc } = await this.client()
    const result = await trpc.users.changePassword.mutate({ current_password: current, new_password: next })
    const others = result.revoked_sessions
    this.human(`password changed; ${others} other session${others === 1 ? '' : 's'} logged out`)
    return result
  }

  /** Silent prompts on the terminal; the new password twice, so a typo does not lock the account. */
  private async prompt(): Promise<[string, string]> {
    const current = await promptPassword('Current password: ')
    const next = await promptPassword('New password: ')
    if ((await promptPassword('New password again: ')) !== next) throw new UsageError('the new passwords do not match; nothing was changed')
    return [current, next]
  }
}
