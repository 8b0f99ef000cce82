import { createPostInput, editPostInput, feedInput, hashtagPageInput, postDetailInput, postIdInput, postsByUserInput } from '../../shared/schemas/posts.js'
import { editPost } from '../domain/edits.js'
import { getExplore } from '../domain/explore.js'
import { bookmarkPost, listBookmarks, unbookmarkPost } from '../domain/bookmarks.js'
import { getPostDetail } from '../domain/comments.js'
import { getHashtagPage } from '../domain/hashtag-pages.js'
import { createPost, getFeed, getPostsByUser } from '../domain/posts.js'
import { deletePost } from '../domain/removal.js'
import { authedProcedure, optionalAuthProcedure, router } from '../trpc.js'

export const postsRouter = router({
  create: authedProcedure
    .input(createPostInput)
    .mutation(({ ctx, input }) =>
      createPost(ctx.services.db, ctx.services.reads, ctx.user.id, input, ctx.services.clock(), ctx.services.fanout),
    ),

  feed: authedProcedure.input(feedInput).query(({ ctx, input }) => getFeed(ctx.services, ctx.user.id, input)),

  explore: optionalAuthProcedure
    .input(feedInput)
    .query(({ ctx, input }) => getExplore(ctx.services, ctx.user?.id ?? null, ctx.services.clock(), input)),

  detail: optionalAuthProcedure
    .input(postDetailInput)
    .query(({ ctx, input }) => getPostDetail(ctx.services, ctx.user?.id ?? null, input)),

  byUser: optionalAuthProcedure
    .input(postsByUserInput)
    .query(({ ctx, input }) => getPostsByUser(ctx.services.reads, input.user_id, ctx.user?.id ?? null, input)),

  delete: authedProcedure
    .input(postIdInput)
    .mutation(async ({ ctx, input }) => {
      await deletePost(ctx.services, input.post_id, { userId: ctx.user.id })
      return null
    }),

  /** A hashtag's public posts, newest first. */
  hashtag: optionalAuthProcedure.input(hashtagPageInput).query(({ ctx, input }) => getHashtagPage(ctx.services, ctx.user?.id ?? null, input)),

  bookmark: authedProcedure.input(postIdInput).mutation(({ ctx, input }) => bookmarkPost(ctx.services.db, ctx.user.id, input.post_id, ctx.services.clock())),

  unbookmark: authedProcedure.input(postIdInput).mutation(({ ctx, input }) => unbookmarkPost(ctx.services.db, ctx.user.id, input.post_id)),

  /** The caller's saved posts, newest saved first (only the owner ever sees them). */
  bookmarks: authedProcedure.input(feedInput).query(({ ctx, input }) => listBookmarks(ctx.services, ctx.user.id, input)),

  edit: authedProcedure.input(editPostInput).mutation(({ ctx, input }) => editPost(ctx.services, ctx.user.id, input)),
})
