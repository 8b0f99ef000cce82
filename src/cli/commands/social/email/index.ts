import type { inferRouterOutputs } from '@trpc/server'
import type { AppRouter } from '../../../../server/router.js'
import { PlazaCommand } from '../../../base.js'

export type EmailState = inferRouterOutputs<AppRouter>['users']['email']

export function describeEmail(state: EmailState): string {
  const lines = [`${state.email} (${state.email_verified ? 'verified' : 'not verified'})`]
  if (state.pending_email) lines.push(`changing to ${state.pending_email}: open the link mailed there`)
  return lines.join('\n')
}

export default class Email extends PlazaCommand<typeof Email> {
  static override description = "Your account's email address, whether it is verified, and an address it is changing to."
  static override examples = ['<%= config.bin %> social email', '<%= config.bin %> social email --json']

  async run(): Promise<EmailState> {
    this.requireLogin()
    const { trpc } = await this.client()
    const state = await trpc.users.email.query()
    this.human(describeEmail(state))
    return state
  }
}
