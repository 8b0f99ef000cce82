import { asUsageError, dataDirFlag, formatTable, withDataDir } from '../../../admin.js'
import type { GatewayKeyInfo } from '../../../../server/chat/keys/store.js'
import { CliCommand } from '../../../command.js'

/** Operator command: the gateway's keys and their limits, never the keys themselves. */
export default class AdminKeysList extends CliCommand {
  static override description = 'List the chat gateway keys of a local data directory: limits, tokens used, revoked or not (never the keys, which are not stored).'

  static override examples = ['<%= config.bin %> admin keys list', '<%= config.bin %> admin keys list --json']

  static override enableJsonFlag = true

  static override flags = { 'data-dir': dataDirFlag }

  async run(): Promise<GatewayKeyInfo[]> {
    const { flags } = await this.parse(AdminKeysList).catch(asUsageError)
    const keys = await withDataDir(this, flags['data-dir'], async (services) => (await services.gatewayAccess()).listKeys())
    if (!this.jsonEnabled()) {
      if (keys.length === 0) this.log('no gateway keys (the gateway is open unless PLAZA_GATEWAY_AUTH=required)')
      else {
        const limit = (value: number | null) => (value === null ? '-' : String(value))
        const rows = keys.map((key) => [
          String(key.id),
          key.name,
          key.revoked_at ? `revoked ${key.revoked_at}` : 'live',
          limit(key.rpm),
          limit(key.tpm),
          key.budget_tokens === null ? String(key.used_tokens) : `${key.used_tokens}/${key.budget_tokens}`,
          key.budget_usd === null ? `$${key.used_usd}` : `$${key.used_usd}/$${key.budget_usd}`,
          key.premium ? 'yes' : 'no',
          key.created_at,
          key.models?.join(',') ?? 'all',
        ])
        this.log(formatTable(['ID', 'NAME', 'STATE', 'RPM', 'TPM', 'TOKENS', 'SPENT', 'PREMIUM', 'CREATED', 'MODELS'], rows))
      }
    }
    return keys
  }
}
