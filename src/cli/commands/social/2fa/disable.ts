import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { readPassword } from '../../../password.js'
import { secondFactor, secondFactorFlags } from '../../../second-factor.js'
import type { TwoFactorStatus } from './index.js'

export default class TwoFactorDisable extends PlazaCommand<typeof TwoFactorDisable> {
  static override description = 'Turn two-factor login off: your password and a code from the app (or a recovery code).'
  static override examples = ['<%= config.bin %> social 2fa disable', 'printf %s "$PASSWORD" | <%= config.bin %> social 2fa disable --password-stdin --code 123456']

  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }), ...secondFactorFlags }

  async run(): Promise<TwoFactorStatus> {
    this.requireLogin()
    const password = await readPassword(this.flags['password-stdin'])
    const factor = await secondFactor(this.flags, !this.flags['password-stdin'])
    const { trpc } = await this.client()
    const status = await trpc.twoFactor.disable.mutate({ password, ...factor })
    this.human('two-factor login is off')
    return status
  }
}
