import { Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, formatTable, withDataDir } from '../../admin.js'
import type { ModerationAction } from '../../../shared/types.js'
import { CliCommand } from '../../command.js'

/** Operator command: the moderation record (who did what, when), newest first. */
export default class AdminActions extends CliCommand {
  static override description = 'The moderation record, newest first: every dismiss, remove, suspend and unsuspend, who did it and when.'

  static override examples = ['<%= config.bin %> admin actions', '<%= config.bin %> admin actions --limit 500 --json']

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    limit: Flags.integer({ description: 'how many, newest first', min: 1, max: 1000, default: 50 }),
  }

  async run(): Promise<ModerationAction[]> {
    const { flags } = await this.parse(AdminActions).catch(asUsageError)
    const { listActions } = await import('../../../server/domain/moderation.js')
    const actions = await withDataDir(this, flags['data-dir'], (services) => listActions(services.db, flags.limit))
    if (!this.jsonEnabled()) {
      if (actions.length === 0) this.log('no moderation actions')
      else {
        const rows = actions.map((a) => [
          String(a.id),
          a.created_at,
          a.moderator,
          a.action,
          `${a.target_type} ${a.target_id}${a.target_username ? ` (@${a.target_username})` : ''}`,
          a.report_id === null ? '-' : `#${a.report_id}`,
          a.note.replace(/\s+/g, ' '),
        ])
        this.log(formatTable(['ID', 'WHEN', 'MODERATOR', 'ACTION', 'TARGET', 'REPORT', 'NOTE'], rows))
      }
    }
    return actions
  }
}
