import { loginInput, registerInput, sessionIdInput } from '../../shared/schemas/auth.js'
import { logIn, loginAccountKey, logOut, refreshSession, registerAccount } from '../domain/accounts.js'
import { listSessions, revokeOwnSession } from '../domain/sessions.js'
import { authedProcedure, guardPassword, publicProcedure, router } from '../trpc.js'

/**
 * Every call counts in the `default` class (per address, per user once signed in); a wrong password
 * at login also counts in `auth`, per address and per account (guardPassword). Registrations,
 * duplicates and malformed bodies are not failures: a first set-up never trips the login limit.
 */
export const authRouter = router({
  register: publicProcedure
    .meta({ errors: { 409: 'The username is taken, or the email is registered' } })
    .input(registerInput)
    .mutation(({ ctx, input }) => registerAccount(ctx.services.db, input, ctx.services.clock(), ctx.userAgent)),

  login: publicProcedure
    .meta({ errors: { 401: 'Wrong email (or username) or password', 403: 'The account is suspended' } })
    .input(loginInput)
    .mutation(async ({ ctx, input }) =>
      guardPassword(ctx, await loginAccountKey(ctx.services.db, input.email), () => logIn(ctx.services.db, input, ctx.services.clock(), ctx.userAgent)),
    ),

  logout: authedProcedure.mutation(({ ctx }) => logOut(ctx.services.db, ctx.sessionId, ctx.services.clock())),

  refresh: authedProcedure.mutation(({ ctx }) => refreshSession(ctx.services.db, ctx.user, ctx.sessionId, ctx.services.clock(), ctx.userAgent)),

  sessions: authedProcedure.query(({ ctx }) => listSessions(ctx.services.reads, ctx.user.id, ctx.sessionId, ctx.services.clock())),

  revokeSession: authedProcedure
    .input(sessionIdInput)
    .mutation(({ ctx, input }) => revokeOwnSession(ctx.services.db, ctx.user.id, input.id, ctx.services.clock())),
})
