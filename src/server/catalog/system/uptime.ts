/** `GET /api/uptime`: when the server started and how long ago, by the services' clock. */
import { formatDateTime } from '../../../shared/dates.js'
import type { UptimeAnswer } from '../../../shared/schemas/catalog.js'
import { sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'

/** `3 d 4 h 5 min 6 s`, without the leading units that are zero. */
function describeDuration(totalSeconds: number): string {
  const parts: Array<[number, string]> = [
    [Math.floor(totalSeconds / 86_400), 'd'],
    [Math.floor(totalSeconds / 3600) % 24, 'h'],
    [Math.floor(totalSeconds / 60) % 60, 'min'],
    [totalSeconds % 60, 's'],
  ]
  const first = parts.findIndex(([value]) => value > 0)
  return parts
    .slice(first < 0 ? parts.length - 1 : first)
    .map(([value, unit]) => `${value} ${unit}`)
    .join(' ')
}

export async function handleUptime({ res, ctx }: Exchange): Promise<void> {
  const { clock, startedAt } = ctx.services
  const now = clock()
  // A clock set back (by NTP, or a test) must not make the uptime negative.
  const seconds = Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000))
  const answer: UptimeAnswer = { message: `Up for ${describeDuration(seconds)}`, started_at: formatDateTime(startedAt), uptime_seconds: seconds, now: formatDateTime(now) }
  sendJson(res, 200, answer)
}
