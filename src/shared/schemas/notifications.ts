import { z } from 'zod'
import { id, pagination } from './common.js'

/** A query-string flag: `true`/`false`/`1`/`0` (or a JSON boolean); anything else is a 400, never silently true. */
const flag = (name: string) =>
  z.preprocess(
    (v) => {
      if (v === '' || v === null) return undefined
      if (typeof v !== 'string') return v
      const s = v.trim().toLowerCase()
      return s === 'true' || s === '1' ? true : s === 'false' || s === '0' ? false : v
    },
    z.boolean({ error: `${name} must be true or false` }).default(false),
  )

export const notificationListInput = z.object({ ...pagination, unread_only: flag('unread_only') }).prefault({})
export type NotificationListInput = z.input<typeof notificationListInput>

/** Without `notification_id` every unread notification of the caller is marked read. */
export const markReadInput = z.object({ notification_id: id('notification_id').optional() }).default({})
export type MarkReadInput = z.input<typeof markReadInput>
