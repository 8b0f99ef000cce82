import { Args } from '@oclif/core'
import { asUsageError, dataDirFlag, moderationBy, moderatorFlag, noteFlag, userRefOf, withDataDir } from '../../admin.js'
import type { SuspensionChange } from '../../../server/domain/moderation.js'
import { CliCommand } from '../../command.js'

/** Operator command: suspends a user without a report; recorded like every moderation action. */
export default class AdminSuspend extends CliCommand {
  static override description = `Suspend a user directly on a local data directory: they can no longer log in, and every request with their sessions is refused (403).
Their sessions are kept, so plaza admin unsuspend restores access. Recorded in plaza admin actions.`

  static override examples = ['<%= config.bin %> admin suspend mallory --note "ban evasion"', '<%= config.bin %> admin suspend 42 --moderator alice --json']

  static override enableJsonFlag = true

  static override args = {
    user: Args.string({ description: 'username (case-insensitive) or numeric id', required: true }),
  }

  static override flags = { 'data-dir': dataDirFlag, note: noteFlag, moderator: moderatorFlag }

  async run(): Promise<SuspensionChange> {
    const { args, flags } = await this.parse(AdminSuspend).catch(asUsageError)
    const by = await moderationBy(flags)
    const { suspendUser } = await import('../../../server/domain/moderation.js')
    const change = await withDataDir(this, flags['data-dir'], (services) => suspendUser(services, userRefOf(args.user), by, services.clock()))
    if (!this.jsonEnabled()) this.log(`${change.user.username} is suspended (since ${change.user.suspended_at})`)
    return change
  }
}
