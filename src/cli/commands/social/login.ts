import { Flags } from '@oclif/core'
import { isTRPCClientError } from '@trpc/client'
import { PlazaCommand } from '../../base.js'
import { readPassword } from '../../password.js'
import { secondFactor, secondFactorFlags } from '../../second-factor.js'
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
    ...secondFactorFlags,
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
        ? await trpc.auth.loginTwoFactor.mutate({ challenge_token: answer.challenge_token, ...(await secondFactor(this.flags, !this.flags['password-stdin'])) }).catch(asCommandError)
        : answer
    this.saveSession({ token: session.token, username: session.user.username, expires_at: session.expires_at })
    this.human(`logged in as @${session.user.username} (id ${session.user.id}); session expires ${session.expires_at} UTC`)
    return { user: session.user, expires_at: session.expires_at }
  }
}
