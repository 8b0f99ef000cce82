import { Args, Flags } from '@oclif/core'
import { PlazaCommand } from '../../../base.js'
import { readPassword } from '../../../password.js'
import { describeEmail, type EmailState } from './index.js'

export default class EmailChange extends PlazaCommand<typeof EmailChange> {
  static override description =
    'Change your email address (asks for your password). When the server sends mail, the new address is pending until you open the link mailed to it.'
  static override examples = ['<%= config.bin %> social email change alice@new.example', 'printf %s "$PASSWORD" | <%= config.bin %> social email change alice@new.example --password-stdin']

  static override args = { email: Args.string({ description: 'the new address', required: true }) }
  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the password from stdin instead of prompting' }) }

  async run(): Promise<EmailState> {
    this.requireLogin()
    const password = await readPassword(this.flags['password-stdin'])
    const { trpc } = await this.client()
    const state = await trpc.users.changeEmail.mutate({ email: this.args.email, password })
    this.human(describeEmail(state))
    return state
  }
}
