import { commentIdInput, commentInput, likeInput, repliesInput } from '../../shared/schemas/interactions.js'
import { listReplies } from '../domain/comments.js'
import { commentOnPost, likePost, unlikePost } from '../domain/interactions.js'
import { deleteComment } from '../domain/removal.js'
import { authedProcedure, optionalAuthProcedure, router } from '../trpc.js'

export const interactionsRouter = router({
  like: authedProcedure
    .input(likeInput)
    .mutation(({ ctx, input }) => likePost(ctx.services.db, ctx.services.warm, ctx.user.id, input.post_id, ctx.services.clock())),

  unlike: authedProcedure.input(likeInput).mutation(({ ctx, input }) => unlikePost(ctx.services.db, ctx.services.warm, ctx.user.id, input.post_id)),

  comment: authedProcedure
    .input(commentInput)
    .mutation(({ ctx, input }) => commentOnPost(ctx.services.db, ctx.services.reads, ctx.services.warm, ctx.user.id, input, ctx.services.clock())),

  /** A page of a comment's replies, oldest first. */
  replies: optionalAuthProcedure.input(repliesInput).query(({ ctx, input }) => listReplies(ctx.services, ctx.user?.id ?? null, input)),

  deleteComment: authedProcedure
    .input(commentIdInput)
    .mutation(async ({ ctx, input }) => {
      await deleteComment(ctx.services, input.comment_id, { userId: ctx.user.id })
      return null
    }),
})
