import { markReadInput, notificationListInput } from '../../shared/schemas/notifications.js'
import { countUnread, listNotifications, markRead } from '../domain/notifications.js'
import { authedProcedure, router } from '../trpc.js'

/** Every procedure acts on the caller's own notifications only; there is no way to name another user. */
export const notificationsRouter = router({
  list: authedProcedure
    .input(notificationListInput)
    .query(({ ctx, input }) =>
      listNotifications(ctx.services, ctx.user.id, { page: input.page, limit: input.limit, unreadOnly: input.unread_only }),
    ),

  count: authedProcedure.query(({ ctx }) => countUnread(ctx.services.reads, ctx.user.id)),

  markRead: authedProcedure
    .input(markReadInput)
    .mutation(({ ctx, input }) => markRead(ctx.services.db, ctx.user.id, input.notification_id)),
})
