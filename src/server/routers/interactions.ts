import { commentInput, likeInput } from '../../shared/schemas/interactions.js'
import { commentOnPost, likePost, unlikePost } from '../domain/interactions.js'
import { authedProcedure, router } from '../trpc.js'

export const interactionsRouter = router({
  like: authedProcedure
    .input(likeInput)
    .mutation(({ ctx, input }) => likePost(ctx.services.db, ctx.user.id, input.post_id, ctx.services.clock())),

  unlike: authedProcedure.input(likeInput).mutation(({ ctx, input }) => unlikePost(ctx.services.db, ctx.user.id, input.post_id)),

  comment: authedProcedure
    .input(commentInput)
    .mutation(({ ctx, input }) => commentOnPost(ctx.services.db, ctx.user.id, input, ctx.services.clock())),
})
