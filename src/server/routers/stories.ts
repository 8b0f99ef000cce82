import { storyCreateInput, storyIdInput, storyViewInput } from '../../shared/schemas/stories.js'
import { deleteStory } from '../domain/removal.js'
import { createStory, storyFeed, viewStory } from '../domain/stories.js'
import { authedProcedure, router } from '../trpc.js'

export const storiesRouter = router({
  create: authedProcedure
    .input(storyCreateInput)
    .mutation(({ ctx, input }) => createStory(ctx.services.db, ctx.services.reads, ctx.user, input, ctx.services.clock())),

  feed: authedProcedure.query(({ ctx }) => storyFeed(ctx.services.reads, ctx.user.id, ctx.services.clock())),

  /** A mutation although REST serves it on GET: opening a story records a view and notifies its author. */
  view: authedProcedure
    .input(storyViewInput)
    .mutation(({ ctx, input }) => viewStory(ctx.services.db, ctx.user, input.story_id, ctx.services.clock())),

  delete: authedProcedure
    .input(storyIdInput)
    .mutation(async ({ ctx, input }) => {
      await deleteStory(ctx.services, input.story_id, { userId: ctx.user.id })
      return null
    }),
})
