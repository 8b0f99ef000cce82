import type { AccountEntry } from '../../../config.js'
import { PlazaCommand } from '../../../base.js'
import { targetKey } from '../../../client.js'

export default class Accounts extends PlazaCommand<typeof Accounts> {
  static override description = 'The accounts kept for this server (or data directory); * marks the active one. Tokens are never shown.'
  static override examples = [
    '<%= config.bin %> social accounts',
    '<%= config.bin %> social accounts --json --url http://127.0.0.1:8080',
    '<%= config.bin %> social accounts --jq ".[] | select(.active) | .username"',
  ]

  async run(): Promise<AccountEntry[]> {
    const accounts = this.sessions.accounts(targetKey(this.target))
    if (accounts.length === 0) this.human(`no accounts kept for ${this.where()}: log in with \`plaza social login\``)
    for (const account of accounts) this.human(`${account.active ? '*' : ' '} @${account.username}  (session expires ${account.expires_at} UTC)`)
    return accounts
  }
}
