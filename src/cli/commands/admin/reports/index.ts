import { Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, withDataDir } from '../../../admin.js'
import type { ReportEntry } from '../../../../shared/types.js'
import { CliCommand } from '../../../command.js'

/** Operator command: users' reports, read directly from the data directory (no API lists them). */
export default class AdminReports extends CliCommand {
  static override description = "List users' reports, newest first, with what each is about, directly on a local data directory."

  static override examples = [
    '<%= config.bin %> admin reports --open',
    '<%= config.bin %> admin reports --limit 200 --data-dir /var/lib/plaza --json',
    '<%= config.bin %> admin reports resolve 12 --action remove --note "spam link"',
  ]

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    open: Flags.boolean({ description: 'only reports still open', default: false }),
    limit: Flags.integer({ description: 'how many, newest first', min: 1, max: 1000, default: 50 }),
  }

  async run(): Promise<ReportEntry[]> {
    const { flags } = await this.parse(AdminReports).catch(asUsageError)
    const { listReports } = await import('../../../../server/domain/moderation.js')
    const reports = await withDataDir(this, flags['data-dir'], (services) => listReports(services.db, { open: flags.open, limit: flags.limit }))
    if (!this.jsonEnabled()) this.log(reports.length === 0 ? (flags.open ? 'no open reports' : 'no reports') : reports.map(reportLines).join('\n'))
    return reports
  }
}

/** One report as a few lines: what, about whom, by whom, then the reported text, the note and the outcome. */
function reportLines(report: ReportEntry): string {
  const lines = [
    `#${report.id}  ${report.status}  ${report.target_type} ${report.target_id} by @${report.target_username}  ${report.reason}  reported by @${report.reporter_username} at ${report.created_at}`,
    `    ${report.excerpt === null ? '(gone)' : JSON.stringify(report.excerpt)}`,
  ]
  if (report.note) lines.push(`    note: ${report.note.replace(/\s+/g, ' ')}`)
  if (report.resolution) lines.push(`    resolved: ${report.resolution} at ${report.resolved_at}`)
  return lines.join('\n')
}
