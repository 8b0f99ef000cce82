import { Args } from '@oclif/core'
import { asUsageError, dataDirFlag, withDataDir } from '../../../admin.js'
import type { GatewayKeyInfo } from '../../../../server/chat/keys/store.js'
import { CliCommand } from '../../../command.js'

/** Operator command: ends a gateway key for good (its usage stays on record). */
export default class AdminKeysRevoke extends CliCommand {
  static override description = `Revoke a chat gateway key by id or name: calls with it get 401 (a running server sees it within a second).
Its usage stays on record. The gateway needs a key while a live key exists: revoking the last one opens it again, unless the server runs with PLAZA_GATEWAY_AUTH=required.`

  static override examples = ['<%= config.bin %> admin keys revoke ci', '<%= config.bin %> admin keys revoke 3 --json']

  static override enableJsonFlag = true

  static override args = {
    key: Args.string({ description: 'the key id, or the name of a live key', required: true }),
  }

  static override flags = { 'data-dir': dataDirFlag }

  async run(): Promise<GatewayKeyInfo> {
    const { args, flags } = await this.parse(AdminKeysRevoke).catch(asUsageError)
    const { revoked, lastOne } = await withDataDir(this, flags['data-dir'], async (services) => {
      const access = await services.gatewayAccess()
      const revoked = await access.revokeKey(args.key)
      return { revoked, lastOne: (await access.listKeys()).every((key) => key.revoked_at !== null) }
    })
    if (!this.jsonEnabled()) this.log(`gateway key #${revoked.id} "${revoked.name}" is revoked`)
    if (lastOne && process.stderr.isTTY) process.stderr.write('no live key is left: the gateway is open again, unless the server runs with PLAZA_GATEWAY_AUTH=required\n')
    return revoked
  }
}
