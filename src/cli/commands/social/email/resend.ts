import { PlazaCommand } from '../../../base.js'

export default class EmailResend extends PlazaCommand<typeof EmailResend> {
  static override description = 'Mail a new verification link for your unverified (or pending) address.'
  static override examples = ['<%= config.bin %> social email resend']

  async run(): Promise<void> {
    this.requireLogin()
    const { trpc } = await this.client()
    await trpc.auth.resendVerification.mutate()
    this.human('a new verification link has been mailed')
    // The REST API answers data: null.
    if (this.jsonEnabled()) this.logJson(null)
  }
}
