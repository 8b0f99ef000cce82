import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { assertCanConfirm, confirmOrExit } from '../../../confirm.js'
import { readPassword } from '../../../password.js'

export default class AccountDelete extends PlazaCommand<typeof AccountDelete> {
  static override description =
    'Delete your account for good: posts, comments, likes, follows, stories and files are erased and the username is freed. Asks you to type your username on a terminal.'
  static override examples = [
    '<%= config.bin %> social account delete',
    'printf %s "$PASSWORD" | <%= config.bin %> social account delete --yes --password-stdin',
  ]
  static override flags = {
    yes: Flags.boolean({ char: 'y', description: 'do not ask to type the username' }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }),
  }

  async run(): Promise<void> {
    this.requireLogin()
    assertCanConfirm(this.flags.yes)
    const token = this.token()
    const { trpc } = await this.client()
    // The username asked for is the server's, not the one stored here, so the right account is named.
    const confirm = this.flags.yes ? null : (await trpc.users.profile.query({})).username
    if (confirm !== null) {
      await confirmOrExit({ yes: false, question: `This erases @${confirm} and everything it posted. Type the username to confirm: `, expected: confirm })
    }
    const password = await readPassword(this.flags['password-stdin'])
    await trpc.users.deleteAccount.mutate({ password })
    this.forgetSession(token)
    this.human('account deleted; the session here is forgotten')
    if (this.jsonEnabled()) this.logJson(null)
  }
}
