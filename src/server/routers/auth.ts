import { loginInput, registerInput, sessionIdInput } from '../../shared/schemas/auth.js'
import { logIn, logOut, refreshSession, registerAccount } from '../domain/accounts.js'
import { listSessions, revokeOwnSession } from '../domain/sessions.js'
import { authedProcedure, publicProcedure, router } from '../trpc.js'

export const authRouter = router({
  register: publicProcedure
    .meta({ rateLimit: 'auth', errors: { 409: 'The username is taken, or the email is registered' } })
    .input(registerInput)
    .mutation(({ ctx, input }) => registerAccount(ctx.services.db, input, ctx.services.clock(), ctx.userAgent)),

  login: publicProcedure
    .meta({ rateLimit: 'auth', errors: { 401: 'Wrong email (or username) or password', 403: 'The account is suspended' } })
    .input(loginInput)
    .mutation(({ ctx, input }) => logIn(ctx.services.db, input, ctx.services.clock(), ctx.userAgent)),

  logout: authedProcedure
    .meta({ rateLimit: 'auth' })
    .mutation(({ ctx }) => logOut(ctx.services.db, ctx.sessionId, ctx.services.clock())),

  refresh: authedProcedure
    .meta({ rateLimit: 'auth' })
    .mutation(({ ctx }) => refreshSession(ctx.services.db, ctx.user, ctx.sessionId, ctx.services.clock(), ctx.userAgent)),

  sessions: authedProcedure.query(({ ctx }) => listSessions(ctx.services.reads, ctx.user.id, ctx.sessionId, ctx.services.clock())),

  revokeSession: authedProcedure
    .input(sessionIdInput)
    .mutation(({ ctx, input }) => revokeOwnSession(ctx.services.db, ctx.user.id, input.id, ctx.services.clock())),
})
