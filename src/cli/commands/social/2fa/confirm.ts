import { Args } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'

export default class TwoFactorConfirm extends PlazaCommand<typeof TwoFactorConfirm> {
  static override description = "Confirm two-factor login with your authenticator app's first code (after `plaza social 2fa enable`); prints ten recovery codes."
  static override examples = ['<%= config.bin %> social 2fa confirm 123456', '<%= config.bin %> social 2fa confirm 123456 --json']

  static override args = { code: Args.string({ description: 'the 6-digit code the app shows', required: true }) }

  async run(): Promise<{ recovery_codes: string[] }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const result = await trpc.twoFactor.confirm.mutate({ code: this.args.code })
    this.human(`two-factor login is on. Recovery codes (each logs in once; keep them somewhere safe, they are not shown again):\n${result.recovery_codes.join('\n')}`)
    return result
  }
}
