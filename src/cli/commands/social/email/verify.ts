import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { describeEmail, type EmailState } from './index.js'

export default class EmailVerify extends PlazaCommand<typeof EmailVerify> {
  static override description = 'Verify an email address with the code of a verification mail (no login needed).'
  static override examples = ['<%= config.bin %> social email verify Xk9fQ2...']

  static override args = { token: Args.string({ description: 'the code from the mail (the token= of its link)', required: true }) }

  async run(): Promise<EmailState> {
    const { trpc } = await this.client()
    const state = await trpc.auth.verifyEmail.mutate({ token: this.args.token })
    this.human(describeEmail(state))
    return state
  }
}
