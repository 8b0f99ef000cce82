import type { NotificationType } from '../../shared/types.js'
import type { Db, Tx } from '../db/client.js'
import { notifications } from '../db/schema.js'

export interface NotificationEvent {
  /** Who is told. */
  userId: number
  /** Who acted. */
  actorId: number
  type: NotificationType
  postId?: number | null
  storyId?: number | null
}

/**
 * Records a notification in the caller's transaction; nobody is notified of their own actions.
 */
export async function notify(db: Db | Tx, event: NotificationEvent, now: Date): Promise<void> {
  if (event.userId === event.actorId) return
  await db.insert(notifications).values({
    userId: event.userId,
    actorId: event.actorId,
    type: event.type,
    postId: event.postId ?? null,
    storyId: event.storyId ?? null,
    createdAt: now.getTime(),
  })
}
