import type { inferRouterOutputs } from '@trpc/server'
import type { AppRouter } from '../../../../server/router.js'
import { PlazaCommand } from '../../../base.js'

export type PushSubscriptionInfo = inferRouterOutputs<AppRouter>['push']['subscription']

/** One line per alert, then the endpoint and policy: what `push`, `push subscribe` and `push update` print. */
export function describeSubscription(subscription: PushSubscriptionInfo): string {
  const alerts = Object.entries(subscription.alerts).map(([type, on]) => `${type}=${on ? 'on' : 'off'}`)
  return [`subscription ${subscription.id}: ${subscription.endpoint}`, `policy: ${subscription.policy}`, `alerts: ${alerts.join(' ')}`].join('\n')
}

export default class Push extends PlazaCommand<typeof Push> {
  static override description = "This session's Web Push subscription: the push service it goes to, and which notifications it pushes."
  static override examples = ['<%= config.bin %> social push', '<%= config.bin %> social push --json']

  async run(): Promise<PushSubscriptionInfo> {
    this.requireLogin()
    const { trpc } = await this.client()
    const subscription = await trpc.push.subscription.query()
    this.human(describeSubscription(subscription))
    return subscription
  }
}
