import { Args, Flags } from '@oclif/core'
import { REPORT_REASONS, REPORT_TARGET_TYPES } from '../../../shared/schemas/reports.js'
import type { Report } from '../../../shared/types.js'
import { PlazaCommand, UsageError, userRef } from '../../base.js'

export default class ReportCommand extends PlazaCommand<typeof ReportCommand> {
  static override description = 'Report a post, comment, story or user to the operators (one open report per thing you report).'
  static override examples = [
    '<%= config.bin %> social report post 12 --reason spam',
    '<%= config.bin %> social report user mallory --reason harassment --note "keeps messaging me"',
    '<%= config.bin %> social report comment 7 --reason hate --json',
  ]
  static override args = {
    type: Args.string({ description: 'what you report', options: [...REPORT_TARGET_TYPES], required: true }),
    id: Args.string({ description: 'its id (a username also works for a user)', required: true }),
  }
  static override flags = {
    reason: Flags.string({ char: 'r', description: 'why', options: [...REPORT_REASONS], required: true }),
    note: Flags.string({ char: 'n', description: 'details for the moderators (at most 1000 characters)' }),
  }

  async run(): Promise<{ report: Report }> {
    this.requireLogin()
    const type = this.args.type as (typeof REPORT_TARGET_TYPES)[number]
    const ref = userRef(this.args.id)
    if (typeof ref !== 'number' && type !== 'user') throw new UsageError(`${type} id must be a number, not "${this.args.id}"`)
    const { trpc } = await this.client()
    // The API takes a user's numeric id; a username is looked up first.
    const targetId = typeof ref === 'number' ? ref : (await trpc.users.profile.query({ user_id: ref })).id
    const result = await trpc.reports.create.mutate({
      target_type: type,
      target_id: targetId,
      reason: this.flags.reason as (typeof REPORT_REASONS)[number],
      note: this.flags.note,
    })
    this.human(`reported ${type} ${targetId} (${result.report.reason}) · report ${result.report.id} is open`)
    return result
  }
}
