import { changePasswordInput, deleteAccountInput } from '../../shared/schemas/auth.js'
import { followInput, followListInput, profileInput, updateProfileInput } from '../../shared/schemas/users.js'
import { follow, listFollows, unfollow } from '../domain/follows.js'
import { deleteAccount } from '../domain/removal.js'
import { changePassword } from '../domain/sessions.js'
import { loadProfile, updateProfile } from '../domain/users.js'
import { authedProcedure, optionalAuthProcedure, router } from '../trpc.js'

export const usersRouter = router({
  profile: authedProcedure
    .input(profileInput)
    .query(({ ctx, input }) => loadProfile(ctx.services.reads, input.user_id ?? ctx.user.id, ctx.user.id, ctx.services.clock())),

  update: authedProcedure
    .input(updateProfileInput)
    .mutation(({ ctx, input }) => updateProfile(ctx.services.db, ctx.user.id, input, ctx.services.clock())),

  follow: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => follow(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id, ctx.services.clock())),

  unfollow: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => unfollow(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id, ctx.services.clock())),

  followers: optionalAuthProcedure
    .input(followListInput)
    .query(({ ctx, input }) => listFollows(ctx.services, 'followers', input.user_id, ctx.user?.id ?? null, input)),

  following: optionalAuthProcedure
    .input(followListInput)
    .query(({ ctx, input }) => listFollows(ctx.services, 'following', input.user_id, ctx.user?.id ?? null, input)),

  /** Counted in the `auth` class: each call checks a password. */
  changePassword: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(changePasswordInput)
    .mutation(({ ctx, input }) => changePassword(ctx.services.db, ctx.user, ctx.sessionId, input, ctx.services.clock())),

  deleteAccount: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(deleteAccountInput)
    .mutation(async ({ ctx, input }) => {
      await deleteAccount(ctx.services, ctx.user.id, input.password)
      return null
    }),
})
