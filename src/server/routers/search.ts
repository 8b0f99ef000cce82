import { searchInput } from '../../shared/schemas/search.js'
import { searchAll, searchHashtags, searchPosts, searchUsers } from '../domain/search.js'
import { optionalAuthProcedure, router } from '../trpc.js'

export const searchRouter = router({
  all: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchAll(ctx.services.db, input.q, ctx.user?.id ?? null, input.limit)),
  users: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchUsers(ctx.services.db, input.q, ctx.user?.id ?? null, input.limit)),
  posts: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchPosts(ctx.services.db, input.q, ctx.user?.id ?? null, input.limit)),
  hashtags: optionalAuthProcedure.input(searchInput).query(({ ctx, input }) => searchHashtags(ctx.services.db, input.q, input.limit)),
})
