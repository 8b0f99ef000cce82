import { Flags } from '@oclif/core'
import type { inferRouterOutputs } from '@trpc/server'
import type { AppRouter } from '../../../../server/router.js'
import { PlazaCommand } from '../../../base.js'
import { promptPassword, readPassword } from '../../../password.js'

type Setup = inferRouterOutputs<AppRouter>['twoFactor']['setup']

export default class TwoFactorEnable extends PlazaCommand<typeof TwoFactorEnable> {
  static override description =
    'Turn two-factor login on: shows a QR code (and the secret) for your authenticator app, asks for its first code, and prints ten recovery codes. Without a terminal it prints the secret and URI; confirm with `plaza social 2fa confirm CODE`.'
  static override examples = ['<%= config.bin %> social 2fa enable', 'printf %s "$PASSWORD" | <%= config.bin %> social 2fa enable --password-stdin --json']

  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }) }

  async run(): Promise<Setup & { recovery_codes: string[] | null }> {
    this.requireLogin()
    const password = await readPassword(this.flags['password-stdin'])
    const { trpc } = await this.client()
    const setup = await trpc.twoFactor.setup.mutate({ password })
    if (!this.jsonEnabled()) {
      const { default: qrcode } = await import('qrcode')
      this.log(await qrcode.toString(setup.otpauth_url, { type: 'terminal', small: true }))
      this.log(`secret: ${setup.secret}\nURI: ${setup.otpauth_url}`)
    }
    // A code exists only once the app has the secret: a script confirms in a second command.
    if (this.flags['password-stdin'] || !process.stdin.isTTY) {
      this.human('add it to your authenticator app, then run `plaza social 2fa confirm CODE` with the code it shows')
      return { ...setup, recovery_codes: null }
    }
    const code = await promptPassword('Code from the app: ')
    const { recovery_codes } = await trpc.twoFactor.confirm.mutate({ code })
    this.human(`two-factor login is on. Recovery codes (each logs in once; keep them somewhere safe, they are not shown again):\n${recovery_codes.join('\n')}`)
    return { ...setup, recovery_codes }
  }
}
