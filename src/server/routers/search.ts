import { searchInput, trendingInput } from '../../shared/schemas/search.js'
import { getTrending } from '../domain/hashtag-pages.js'
import { searchAll, searchHashtags, searchPosts, searchUsers } from '../domain/search.js'
import { optionalAuthProcedure, router } from '../trpc.js'

export const searchRouter = router({
  all: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchAll(ctx.services, input.q, ctx.user?.id ?? null, input.limit, ctx.services.clock(), ctx.services.config.searchCacheTtlMs)),
  users: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchUsers(ctx.services.scans, input.q, ctx.user?.id ?? null, input.limit)),
  posts: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchPosts(ctx.services, input.q, ctx.user?.id ?? null, input.limit, ctx.services.clock(), ctx.services.config.searchCacheTtlMs)),
  /** Hashtags trending now: the same ranking for everyone, recomputed every minute. */
  trending: optionalAuthProcedure.input(trendingInput).query(({ ctx, input }) => getTrending(ctx.services, ctx.services.clock(), input.limit)),
  hashtags: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchHashtags(ctx.services.scans, input.q, input.limit, ctx.services.clock(), ctx.services.config.searchCacheTtlMs)),
})
