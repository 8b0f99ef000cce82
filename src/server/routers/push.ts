import { pushSubscribeInput, pushUpdateInput } from '../../shared/schemas/push.js'
import { getPushSubscription, subscribePush, unsubscribePush, updatePush, vapidPublicKey } from '../domain/push-subscriptions.js'
import { authedProcedure, publicProcedure, router } from '../trpc.js'

/** Web Push (Mastodon's /api/v1/push/subscription): every procedure but `vapidKey` acts on the calling session's own subscription. */
export const pushRouter = router({
  vapidKey: publicProcedure.query(({ ctx }) => vapidPublicKey(ctx.services)),

  subscription: authedProcedure.query(({ ctx }) => getPushSubscription(ctx.services, ctx.sessionId)),

  subscribe: authedProcedure
    .input(pushSubscribeInput)
    .mutation(({ ctx, input }) => subscribePush(ctx.services, ctx.user, ctx.sessionId, input, ctx.services.clock())),

  update: authedProcedure.input(pushUpdateInput).mutation(({ ctx, input }) => updatePush(ctx.services, ctx.sessionId, input, ctx.services.clock())),

  unsubscribe: authedProcedure.mutation(({ ctx }) => unsubscribePush(ctx.services.db, ctx.sessionId)),
})
