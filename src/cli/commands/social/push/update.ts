import { PlazaCommand, UsageError } from '../../../base.js'
import { describeSubscription, type PushSubscriptionInfo } from './index.js'
import { alertFlags, alertsOf } from './subscribe.js'

export default class PushUpdate extends PlazaCommand<typeof PushUpdate> {
  static override description = "Change which notifications this session's subscription pushes; alerts not named stay as they are."
  static override examples = ['<%= config.bin %> social push update --alert like=off --alert comment=on', '<%= config.bin %> social push update --policy follower']

  static override flags = { ...alertFlags }

  async run(): Promise<PushSubscriptionInfo> {
    this.requireLogin()
    const alerts = alertsOf(this.flags.alert)
    if (!alerts && !this.flags.policy) throw new UsageError('give --alert TYPE=on|off or --policy')
    const { trpc } = await this.client()
    const subscription = await trpc.push.update.mutate({ data: { alerts, policy: this.flags.policy as PushSubscriptionInfo['policy'] | undefined } })
    this.human(describeSubscription(subscription))
    return subscription
  }
}
