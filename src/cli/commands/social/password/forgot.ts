import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class PasswordForgot extends PlazaCommand<typeof PasswordForgot> {
  static override description =
    "Ask for a password reset link by mail (no login needed). The answer is the same whether or not an account matches; then run `plaza social password reset` with the mailed code."
  static override examples = ['<%= config.bin %> social password forgot alice@example.com', '<%= config.bin %> social password forgot alice --url https://plaza.example']

  static override args = { login: Args.string({ description: 'your email address (or username)', required: true }) }

  async run(): Promise<void> {
    const { trpc } = await this.client()
    await trpc.auth.forgotPassword.mutate({ email: this.args.login })
    this.human('if an account matches, a link to reset its password has been mailed to its address (it works for 30 minutes)')
    // The REST API answers data: null.
    if (this.jsonEnabled()) this.logJson(null)
  }
}
