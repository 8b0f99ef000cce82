import { Flags } from '@oclif/core'
import { PUSH_POLICIES } from '../../../../shared/schemas/push.js'
import { PlazaCommand, UsageError } from '../../../base.js'
import { describeSubscription, type PushSubscriptionInfo } from './index.js'

/** `--alert like=off` (repeatable) as the API's `data.alerts`. */
export function alertsOf(values: string[] | undefined): Record<string, boolean> | undefined {
  if (!values?.length) return undefined
  const alerts: Record<string, boolean> = {}
  for (const value of values) {
    const match = /^([a-z_.]+)=(on|off|true|false)$/.exec(value.trim())
    if (!match) throw new UsageError(`--alert takes TYPE=on or TYPE=off (e.g. like=off), not "${value}"`)
    alerts[match[1]] = match[2] === 'on' || match[2] === 'true'
  }
  return alerts
}

export const alertFlags = {
  alert: Flags.string({ description: 'TYPE=on|off for a notification type (repeatable); types not given stay on', multiple: true }),
  policy: Flags.string({ description: "whose notifications are pushed: all, followed (people you follow), follower (your followers), none", options: [...PUSH_POLICIES] }),
}

export default class PushSubscribe extends PlazaCommand<typeof PushSubscribe> {
  static override description =
    "Subscribe this session to Web Push with a push service's endpoint and the browser's keys (a PushSubscription's endpoint, keys.p256dh and keys.auth); replaces the session's subscription."
  static override examples = [
    '<%= config.bin %> social push subscribe --endpoint https://updates.push.services.mozilla.com/wpush/v2/gAAA... --p256dh BNcR... --auth tBHI...',
    '<%= config.bin %> social push subscribe --endpoint https://fcm.googleapis.com/fcm/send/dK9... --p256dh BNcR... --auth tBHI... --alert story_view=off --policy followed',
  ]

  static override flags = {
    endpoint: Flags.string({ description: "the push service URL of the subscription (https)", required: true }),
    p256dh: Flags.string({ description: "the user agent's P-256 public key (keys.p256dh, base64url)", required: true }),
    auth: Flags.string({ description: 'the authentication secret (keys.auth, base64url)', required: true }),
    ...alertFlags,
  }

  async run(): Promise<PushSubscriptionInfo> {
    this.requireLogin()
    const { trpc } = await this.client()
    const subscription = await trpc.push.subscribe.mutate({
      subscription: { endpoint: this.flags.endpoint, keys: { p256dh: this.flags.p256dh, auth: this.flags.auth } },
      data: { alerts: alertsOf(this.flags.alert), policy: this.flags.policy as PushSubscriptionInfo['policy'] | undefined },
    })
    this.human(describeSubscription(subscription))
    return subscription
  }
}
