import { Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, formatTable, withDataDir } from '../../admin.js'
import type { UsageRow } from '../../../server/chat/keys/usage.js'
import { CliCommand } from '../../command.js'

/** A usage row as the command prints it: the cost in dollars. */
export type UsageLine = Omit<UsageRow, 'cost_nanos'> & { key_name: string; cost_usd: number }

/** Dollars for a table: up to six decimals, no trailing zeros. */
function money(usd: number): string {
  return `$${usd.toFixed(6).replace(/\.?0+$/, '')}`
}

/** Operator command: gateway usage per key, model and UTC day. */
export default class AdminUsage extends CliCommand {
  static override description = `Chat gateway usage of a local data directory, per key, model and UTC day: requests, errors, prompt (of which cached), completion and total tokens, and the cost by the gateway's price table.
A running server writes what it counted every 5 seconds and when it stops.`

  static override examples = ['<%= config.bin %> admin usage', '<%= config.bin %> admin usage --key ci --days 7', '<%= config.bin %> admin usage --json']

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    key: Flags.string({ description: 'only this key (id or name)' }),
    days: Flags.integer({ description: 'how many UTC days, today included', min: 1, max: 366, default: 30 }),
  }

  async run(): Promise<UsageLine[]> {
    const { flags } = await this.parse(AdminUsage).catch(asUsageError)
    const stored = await withDataDir(this, flags['data-dir'], async (services) => (await services.gatewayAccess()).usage({ ref: flags.key, days: flags.days }))
    const rows = stored.map(({ cost_nanos, ...row }) => ({ ...row, cost_usd: cost_nanos / 1e9 }))
    if (!this.jsonEnabled()) {
      if (rows.length === 0) this.log(`no gateway usage in the last ${flags.days} days`)
      else {
        const table = rows.map((row) => [row.day, `${row.key_name} (#${row.key_id})`, row.model, String(row.requests), String(row.errors), String(row.prompt_tokens), String(row.cached_tokens), String(row.completion_tokens), String(row.total_tokens), money(row.cost_usd)])
        const sum = (field: 'requests' | 'errors' | 'prompt_tokens' | 'cached_tokens' | 'completion_tokens' | 'total_tokens') => String(rows.reduce((total, row) => total + row[field], 0))
        const cost = stored.reduce((total, row) => total + row.cost_nanos, 0) / 1e9
        table.push(['total', '', '', sum('requests'), sum('errors'), sum('prompt_tokens'), sum('cached_tokens'), sum('completion_tokens'), sum('total_tokens'), money(cost)])
        this.log(formatTable(['DAY', 'KEY', 'MODEL', 'REQUESTS', 'ERRORS', 'PROMPT', 'CACHED', 'COMPLETION', 'TOTAL', 'COST'], table))
      }
    }
    return rows
  }
}
