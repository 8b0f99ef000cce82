import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { readPassword } from '../../../password.js'
import { secondFactor, secondFactorFlags } from '../../../second-factor.js'

export default class TwoFactorRecoveryCodes extends PlazaCommand<typeof TwoFactorRecoveryCodes> {
  static override description = 'Ten new recovery codes in place of the old ones: your password and a code from the app (or a recovery code).'
  static override examples = ['<%= config.bin %> social 2fa recovery-codes', 'printf %s "$PASSWORD" | <%= config.bin %> social 2fa recovery-codes --password-stdin --code 123456 --json']

  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }), ...secondFactorFlags }

  async run(): Promise<{ recovery_codes: string[] }> {
    this.requireLogin()
    const password = await readPassword(this.flags['password-stdin'])
    const factor = await secondFactor(this.flags, !this.flags['password-stdin'])
    const { trpc } = await this.client()
    const result = await trpc.twoFactor.recoveryCodes.mutate({ password, ...factor })
    this.human(`new recovery codes (the old ones no longer work):\n${result.recovery_codes.join('\n')}`)
    return result
  }
}
