import { Args } from '@oclif/core'
import { asUsageError, dataDirFlag, moderationBy, moderatorFlag, noteFlag, userRefOf, withDataDir } from '../../admin.js'
import type { SuspensionChange } from '../../../server/domain/moderation.js'
import { CliCommand } from '../../command.js'

/** Operator command: lifts a suspension; recorded like every moderation action. */
export default class AdminUnsuspend extends CliCommand {
  static override description = 'Lift a user\'s suspension on a local data directory: login and their existing sessions work again. Recorded in plaza admin actions.'

  static override examples = ['<%= config.bin %> admin unsuspend mallory', '<%= config.bin %> admin unsuspend 42 --note "appeal accepted" --json']

  static override enableJsonFlag = true

  static override args = {
    user: Args.string({ description: 'username (case-insensitive) or numeric id', required: true }),
  }

  static override flags = { 'data-dir': dataDirFlag, note: noteFlag, moderator: moderatorFlag }

  async run(): Promise<SuspensionChange> {
    const { args, flags } = await this.parse(AdminUnsuspend).catch(asUsageError)
    const by = await moderationBy(flags)
    const { unsuspendUser } = await import('../../../server/domain/moderation.js')
    const change = await withDataDir(this, flags['data-dir'], (services) => unsuspendUser(services, userRefOf(args.user), by, services.clock()))
    if (!this.jsonEnabled()) this.log(`${change.user.username} is no longer suspended`)
    return change
  }
}
