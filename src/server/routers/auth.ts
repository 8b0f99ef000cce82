import { loginInput, registerInput } from '../../shared/schemas/auth.js'
import { logIn, logOut, refreshSession, registerAccount } from '../domain/accounts.js'
import { authedProcedure, publicProcedure, router } from '../trpc.js'

export const authRouter = router({
  register: publicProcedure
    .meta({ rateLimit: 'auth' })
    .input(registerInput)
    .mutation(({ ctx, input }) => registerAccount(ctx.services.db, input, ctx.services.clock())),

  login: publicProcedure
    .meta({ rateLimit: 'auth' })
    .input(loginInput)
    .mutation(({ ctx, input }) => logIn(ctx.services.db, input, ctx.services.clock())),

  logout: authedProcedure
    .meta({ rateLimit: 'auth' })
    .mutation(({ ctx }) => logOut(ctx.services.db, ctx.sessionId, ctx.services.clock())),

  refresh: authedProcedure
    .meta({ rateLimit: 'auth' })
    .mutation(({ ctx }) => refreshSession(ctx.services.db, ctx.user, ctx.sessionId, ctx.services.clock())),
})
