import { Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, withDataDir } from '../../../admin.js'
import type { GatewayKeyInfo } from '../../../../server/chat/keys/store.js'
import { CliCommand } from '../../../command.js'
import { UsageError } from '../../../client.js'

/** Operator command: a new chat-gateway key, printed once. */
export default class AdminKeysCreate extends CliCommand {
  static override description = `Create a key for the chat gateway (/api/v1, /api/chaty, /api/reasoning-70b) on a local data directory and print it, once: only its hash is stored.
From the first key on, every gateway call needs Authorization: Bearer <key>. A running server sees a new key within a second.`

  static override examples = [
    '<%= config.bin %> admin keys create --name ci',
    '<%= config.bin %> admin keys create --name mobile-app --models modelg-4o-mini,chaty --rpm 60 --tpm 100000',
    '<%= config.bin %> admin keys create --name trial --budget-tokens 200000 --json',
    '<%= config.bin %> admin keys create --name team --budget-usd 25',
  ]

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    name: Flags.string({ description: 'a name for the key (unique among live keys), for lists and revoking', required: true }),
    models: Flags.string({ description: 'comma-separated model names the key may use (default: every model)' }),
    rpm: Flags.integer({ description: 'requests per minute', min: 1 }),
    tpm: Flags.integer({ description: 'tokens per minute', min: 1 }),
    'budget-tokens': Flags.integer({ description: 'total tokens the key may use over its life', min: 1 }),
    'budget-usd': Flags.string({ description: "dollars the key may spend over its life, by the gateway's price table (e.g. 5 or 0.25)" }),
    premium: Flags.boolean({ description: 'mark the key premium (operations reserved to premium keys)' }),
  }

  async run(): Promise<GatewayKeyInfo & { key: string }> {
    const { flags } = await this.parse(AdminKeysCreate).catch(asUsageError)
    const models = flags.models?.split(',').map((name) => name.trim()).filter(Boolean)
    const budgetUsd = flags['budget-usd'] === undefined ? undefined : Number(flags['budget-usd'])
    if (budgetUsd !== undefined && !(Number.isFinite(budgetUsd) && budgetUsd > 0)) throw new UsageError(`--budget-usd must be an amount of dollars above 0, not "${flags['budget-usd']}"`)
    const { key, info } = await withDataDir(this, flags['data-dir'], async (services) =>
      (await services.gatewayAccess()).createKey({ name: flags.name, models, rpm: flags.rpm, tpm: flags.tpm, budget_tokens: flags['budget-tokens'], budget_usd: budgetUsd, premium: flags.premium }),
    )
    if (!this.jsonEnabled()) {
      // The key alone on stdout, so that `KEY=$(plaza admin keys create --name ci)` works.
      this.log(key)
      if (process.stderr.isTTY) process.stderr.write(`created gateway key #${info.id} "${info.name}": store it now, it is not shown again\n`)
    }
    return { key, ...info }
  }
}
