import type { inferRouterOutputs } from '@trpc/server'
import type { AppRouter } from '../../../../server/router.js'
import { PlazaCommand } from '../../../base.js'

export type TwoFactorStatus = inferRouterOutputs<AppRouter>['twoFactor']['status']

export default class TwoFactor extends PlazaCommand<typeof TwoFactor> {
  static override description = 'Whether two-factor login (a code from an authenticator app) is on for your account, and how many recovery codes are left.'
  static override examples = ['<%= config.bin %> social 2fa', '<%= config.bin %> social 2fa --json']

  async run(): Promise<TwoFactorStatus> {
    this.requireLogin()
    const { trpc } = await this.client()
    const status = await trpc.twoFactor.status.query()
    this.human(
      status.enabled
        ? `two-factor login is on; ${status.recovery_codes_left} recovery code${status.recovery_codes_left === 1 ? '' : 's'} left`
        : status.pending
          ? 'two-factor login is set up but not confirmed: run `plaza social 2fa confirm CODE`'
          : 'two-factor login is off: `plaza social 2fa enable` turns it on',
    )
    return status
  }
}
