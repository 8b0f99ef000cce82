import { Flags } from '@oclif/core'
import type { SessionUser } from '../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../base.js'
import { readPassword } from '../../password.js'

/** What register and login print: the user and when the session expires. The token is stored, never shown. */
export interface SessionInfo {
  user: SessionUser
  expires_at: string
}

export default class Register extends PlazaCommand<typeof Register> {
  static override description = 'Create an account and stay logged in (password from a silent prompt or --password-stdin).'
  static override examples = [
    '<%= config.bin %> social register --username alice --email alice@example.com --full-name "Alice Liddell"',
    'printf %s "$PASSWORD" | <%= config.bin %> social register --username alice --email alice@example.com --password-stdin',
  ]

  static override flags = {
    username: Flags.string({ char: 'u', description: '3 to 30 letters, digits, _ or .', required: true }),
    email: Flags.string({ char: 'e', description: 'email address', required: true }),
    'full-name': Flags.string({ char: 'n', description: 'display name' }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }),
  }

  async run(): Promise<SessionInfo> {
    const password = await readPassword(this.flags['password-stdin'], 'Choose a password: ')
    if (!this.flags['password-stdin'] && (await readPassword(false, 'Repeat the password: ')) !== password) {
      throw new UsageError('the passwords do not match')
    }
    const { trpc } = await this.client()
    const session = await trpc.auth.register.mutate({
      username: this.flags.username,
      email: this.flags.email,
      password,
      full_name: this.flags['full-name'] ?? '',
    })
    this.saveSession({ token: session.token, username: session.user.username, expires_at: session.expires_at })
    this.human(`registered and logged in as @${session.user.username} (id ${session.user.id}); session expires ${session.expires_at} UTC`)
    return { user: session.user, expires_at: session.expires_at }
  }
}
