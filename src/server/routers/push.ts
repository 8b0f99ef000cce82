import { pushSubscribeInput, pushUpdateInput } from '../../shared/schemas/push.js'
import { getPushSubscription, subscribePush, unsubscribePush, updatePush, vapidPublicKey } from '../domain/push-subscriptions.js'
import { URL_CHECK_ERRORS } from '../fetch-guard.js'
import { authedProcedure, publicProcedure, router } from '../trpc.js'

const NO_SUBSCRIPTION = { 404: 'The calling session has no push subscription' }

/** Web Push (Mastodon's /api/v1/push/subscription): every procedure but `vapidKey` acts on the calling session's own subscription. */
export const pushRouter = router({
  vapidKey: publicProcedure.query(({ ctx }) => vapidPublicKey(ctx.services)),

  subscription: authedProcedure.meta({ errors: NO_SUBSCRIPTION }).query(({ ctx }) => getPushSubscription(ctx.services, ctx.sessionId)),

  subscribe: authedProcedure
    .meta({
      errors: {
        400: `${URL_CHECK_ERRORS[400]}; a key is not a P-256 point or a 16-byte secret; an alert names no notification type`,
        422: URL_CHECK_ERRORS[422],
        503: 'Web Push is not set up on this server (PLAZA_VAPID_SUBJECT, an https PLAZA_PUBLIC_URL or PLAZA_MAIL_FROM gives its contact)',
      },
    })
    .input(pushSubscribeInput)
    .mutation(({ ctx, input }) => subscribePush(ctx.services, ctx.user, ctx.sessionId, input, ctx.services.clock())),

  update: authedProcedure.meta({ errors: NO_SUBSCRIPTION }).input(pushUpdateInput).mutation(({ ctx, input }) => updatePush(ctx.services, ctx.sessionId, input, ctx.services.clock())),

  unsubscribe: authedProcedure.mutation(({ ctx }) => unsubscribePush(ctx.services.db, ctx.sessionId)),
})
