import { Args, Errors, Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, moderationBy, moderatorFlag, noteFlag, withDataDir } from '../../../admin.js'
import { REPORT_RESOLUTIONS } from '../../../../shared/schemas/reports.js'
import type { Resolution } from '../../../../server/domain/moderation.js'
import { CliCommand } from '../../../command.js'

/** Operator command: acts on one report and records the action (`plaza admin actions`). */
export default class AdminReportsResolve extends CliCommand {
  static override description = `Resolve a report: dismiss it, remove the reported content for everyone, or suspend the user it is about.
remove and suspend also resolve the other open reports about the same content (remove) or the same user (suspend).`

  static override examples = [
    '<%= config.bin %> admin reports resolve 12 --action dismiss',
    '<%= config.bin %> admin reports resolve 12 --action remove --note "spam link"',
    '<%= config.bin %> admin reports resolve 14 --action suspend --moderator alice --json',
  ]

  static override enableJsonFlag = true

  static override args = {
    id: Args.string({ description: 'the report id (from plaza admin reports)', required: true }),
  }

  static override flags = {
    'data-dir': dataDirFlag,
    action: Flags.string({ description: 'what to do', options: [...REPORT_RESOLUTIONS], required: true }),
    note: noteFlag,
    moderator: moderatorFlag,
  }

  async run(): Promise<Resolution> {
    const { args, flags } = await this.parse(AdminReportsResolve).catch(asUsageError)
    if (!/^\d+$/.test(args.id) || Number(args.id) < 1) throw new Errors.CLIError(`report ID must be a positive whole number, not "${args.id}"`, { exit: 2 })
    const by = await moderationBy(flags)
    const { resolveReport } = await import('../../../../server/domain/moderation.js')
    const action = flags.action as (typeof REPORT_RESOLUTIONS)[number]
    const result = await withDataDir(this, flags['data-dir'], (services) => resolveReport(services, Number(args.id), action, by))
    if (!this.jsonEnabled()) {
      const { report } = result
      const done = {
        dismiss: 'dismissed',
        remove: `removed ${report.target_type} ${report.target_id}`,
        suspend: `suspended @${report.target_username}`,
      }[action]
      this.log(`report ${report.id} resolved: ${done}`)
      if (result.also_resolved.length > 0) this.log(`also resolved: ${result.also_resolved.map((id) => `#${id}`).join(', ')}`)
    }
    return result
  }
}
