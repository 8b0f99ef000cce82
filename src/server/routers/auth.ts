import {
  forgotPasswordInput,
  loginInput,
  loginTwoFactorInput,
  registerInput,
  resetPasswordInput,
  sessionIdInput,
  verifyEmailInput,
} from '../../shared/schemas/auth.js'
import { MAIL_ERRORS } from '../delivery/service.js'
import { logIn, loginAccountKey, logOut, refreshSession, registerAccount } from '../domain/accounts.js'
import { forgotPassword, mailNewAccountVerification, resendVerification, resetPassword, verifyEmail } from '../domain/recovery.js'
import { listSessions, revokeOwnSession } from '../domain/sessions.js'
import { completeLogin } from '../domain/two-factor.js'
import { authedProcedure, codeAttempts, enforceRateLimit, guardPassword, publicProcedure, router, type Context } from '../trpc.js'

/**
 * The routes that mail (forgot) or try a secret (a mailed token, a two-factor code) count every
 * call in the `auth` class per client address (5 a minute), under a key of their own: a mail
 * flood or a guesser is stopped, and neither shares a count with failed logins.
 */
const countSecretTry = (ctx: Context) => enforceRateLimit(ctx, 'auth', `secret:ip:${ctx.clientAddress}`)

/**
 * Every call counts in the `default` class (per address, per user once signed in); a wrong password
 * at login also counts in `auth`, per address and per account (guardPassword). Registrations,
 * duplicates and malformed bodies are not failures: a first set-up never trips the login limit.
 */
export const authRouter = router({
  register: publicProcedure
    .meta({ errors: { 409: 'The username is taken, or the email is registered' } })
    .input(registerInput)
    .mutation(({ ctx, input }) => {
      const now = ctx.services.clock()
      return registerAccount(ctx.services.db, input, now, ctx.userAgent, (tx, user) => mailNewAccountVerification(ctx.services, tx, user, now))
    }),

  login: publicProcedure
    .meta({ errors: { 401: 'Wrong email (or username) or password', 403: 'The account is suspended' } })
    .input(loginInput)
    .mutation(async ({ ctx, input }) =>
      guardPassword(ctx, await loginAccountKey(ctx.services.db, input.email), () => logIn(ctx.services.db, input, ctx.services.clock(), ctx.userAgent)),
    ),

  /** The second step of a login with two-factor on: the challenge and a code give the session (every call counts in `auth` per address; wrong codes in `account` too). */
  loginTwoFactor: publicProcedure
    .meta({ errors: { 401: 'The challenge is unknown, used or expired (5 minutes, 5 wrong codes), or the code is wrong or already used' } })
    .input(loginTwoFactorInput)
    .mutation(async ({ ctx, input }) => {
      await countSecretTry(ctx)
      return completeLogin(ctx.services, input, (userId) => codeAttempts(ctx, userId), ctx.services.clock(), ctx.userAgent)
    }),

  logout: authedProcedure.meta({ unverified: 'allowed' }).mutation(({ ctx }) => logOut(ctx.services.db, ctx.sessionId, ctx.services.clock())),

  refresh: authedProcedure
    .meta({ unverified: 'allowed' })
    .mutation(({ ctx }) => refreshSession(ctx.services.db, ctx.user, ctx.sessionId, ctx.services.clock(), ctx.userAgent)),

  sessions: authedProcedure
    .meta({ unverified: 'allowed' })
    .query(({ ctx }) => listSessions(ctx.services.reads, ctx.user.id, ctx.sessionId, ctx.services.clock())),

  revokeSession: authedProcedure
    .meta({ unverified: 'allowed' })
    .input(sessionIdInput)
    .mutation(({ ctx, input }) => revokeOwnSession(ctx.services.db, ctx.user.id, input.id, ctx.services.clock())),

  /** Mails a reset link (if an account matches: the answer is the same either way). */
  forgotPassword: publicProcedure
    .meta({ errors: MAIL_ERRORS })
    .input(forgotPasswordInput)
    .mutation(async ({ ctx, input }) => {
      await countSecretTry(ctx)
      return forgotPassword(
        ctx.services,
        input.email,
        async (userId) => (await ctx.services.limiter?.hit('account', `mail:user:${userId}`))?.allowed ?? true,
        ctx.services.clock(),
      )
    }),

  resetPassword: publicProcedure
    .meta({ errors: { 400: 'The token is unknown, used, replaced by a newer one or expired (30 minutes)' } })
    .input(resetPasswordInput)
    .mutation(async ({ ctx, input }) => {
      await countSecretTry(ctx)
      return resetPassword(ctx.services, input, ctx.services.clock())
    }),

  verifyEmail: publicProcedure
    .meta({
      errors: { 400: 'The token is unknown, used or expired, or is for an address the account no longer uses', 409: 'Another account took the new address meanwhile' },
    })
    .input(verifyEmailInput)
    .mutation(async ({ ctx, input }) => {
      await countSecretTry(ctx)
      return verifyEmail(ctx.services, input.token, ctx.services.clock())
    }),

  resendVerification: authedProcedure
    .meta({ unverified: 'allowed', errors: { ...MAIL_ERRORS, 409: 'Nothing to verify: the address is verified and no new one is pending' } })
    .mutation(async ({ ctx }) => {
    ctx.services.delivery.mail.assertConfigured()
    await enforceRateLimit(ctx, 'account', `mail:user:${ctx.user.id}`)
    return resendVerification(ctx.services, ctx.user, ctx.services.clock())
  }),
})
