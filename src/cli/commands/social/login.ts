import { Flags } from '@oclif/core'
import { isTRPCClientError } from '@trpc/client'
import { PlazaCommand, UsageError } from '../../base.js'
import { promptPassword, readPassword } from '../../password.js'
import type { SessionInfo } from './register.js'

export default class Login extends PlazaCommand<typeof Login> {
  static override description =
    'Log in and keep the session for this server (or data directory). With two-factor login on, asks for the code from your authenticator app (or --code / --recovery-code).'
  static override examples = [
    '<%= config.bin %> social login --email alice@example.com',
    'printf %s "$PASSWORD" | <%= config.bin %> social login --email alice --password-stdin --url http://127.0.0.1:8080',
    'printf %s "$PASSWORD" | <%= config.bin %> social login --email alice --password-stdin --code 123456',
  ]

  static override flags = {
    email: Flags.string({ char: 'e', description: 'email address (or username)', required: true }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }),
    code: Flags.string({ description: 'the 6-digit code of your authenticator app, when two-factor login is on (else it is asked for)', exclusive: ['recovery-code'] }),
    'recovery-code': Flags.string({ description: 'one of your recovery codes instead of a code (each works once)' }),
  }

  async run(): Promise<SessionInfo> {
    const password = await readPassword(this.flags['password-stdin'])
    const { trpc } = await this.client()
    // Wrong credentials are an error of this command (exit 1), not a missing session (exit 4).
    const asCommandError = (error: unknown): never => {
      if (isTRPCClientError(error) && (error.data as { code?: string } | undefined)?.code === 'UNAUTHORIZED') throw new Error(error.message)
      throw error
    }
    const answer = await trpc.auth.login.mutate({ email: this.flags.email, password }).catch(asCommandError)
    const session =
      'two_factor_required' in answer
        ? await trpc.auth.loginTwoFactor.mutate({ challenge_token: answer.challenge_token, ...(await this.secondFactor()) }).catch(asCommandError)
        : answer
    this.saveSession({ token: session.token, username: session.user.username, expires_at: session.expires_at })
    this.human(`logged in as @${session.user.username} (id ${session.user.id}); session expires ${session.expires_at} UTC`)
    return { user: session.user, expires_at: session.expires_at }
  }

  /** The code from a flag, else asked for on the terminal; without either, a usage error naming the flags. */
  private async secondFactor(): Promise<{ code: string } | { recovery_code: string }> {
    if (this.flags['recovery-code'] !== undefined) return { recovery_code: this.flags['recovery-code'] }
    if (this.flags.code !== undefined) return { code: this.flags.code }
    if (!process.stdin.isTTY || this.flags['password-stdin']) throw new UsageError('two-factor login is on for this account: pass --code (or --recovery-code)')
    const code = (await promptPassword('Two-factor code (or a recovery code): ')).trim()
    return /^[\d\s]+$/.test(code) ? { code } : { recovery_code: code }
  }
}
