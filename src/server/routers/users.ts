import { profileInput } from '../../shared/schemas/users.js'
import { findUser, getProfile } from '../domain/users.js'
import { authedProcedure, router } from '../trpc.js'

export const usersRouter = router({
  profile: authedProcedure.input(profileInput).query(async ({ ctx, input }) => {
    const user = input.user_id === undefined ? ctx.user : await findUser(ctx.services.db, input.user_id)
    return getProfile(ctx.services.db, user, ctx.user.id, ctx.services.clock())
  }),
})
