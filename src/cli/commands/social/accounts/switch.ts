import { Args } from '@oclif/core'
import type { AccountEntry } from '../../../config.js'
import { PlazaCommand } from '../../../base.js'
import { targetKey } from '../../../client.js'

export default class AccountsSwitch extends PlazaCommand<typeof AccountsSwitch> {
  static override description = 'Make another kept account the active one for this server (or data directory).'
  static override examples = ['<%= config.bin %> social accounts switch bob', '<%= config.bin %> social accounts switch alice --url http://127.0.0.1:8080']
  static override args = { user: Args.string({ description: 'username of an account kept here (see `plaza social accounts`)', required: true }) }

  async run(): Promise<AccountEntry> {
    const key = targetKey(this.target)
    const session = this.sessions.switch(key, this.args.user)
    if (!session) {
      const kept = this.sessions.accounts(key).map((account) => `@${account.username}`)
      throw new Error(`no account @${this.args.user.replace(/^@/, '')} kept for ${this.where()} (${kept.length ? `kept: ${kept.join(', ')}` : 'none kept'}); add it with \`plaza social login\``)
    }
    this.human(`@${session.username} is now the active account for ${this.where()}`)
    return { username: session.username, expires_at: session.expires_at, active: true }
  }
}
