import { twoFactorConfirmInput, twoFactorProofInput, twoFactorSetupInput } from '../../shared/schemas/auth.js'
import { confirmTwoFactor, disableTwoFactor, regenerateRecoveryCodes, setUpTwoFactor, twoFactorStatus } from '../domain/two-factor.js'
import { authedProcedure, codeAttempts, router } from '../trpc.js'

/** Two-factor login (TOTP) of the caller's own account; the login's second step is `auth.loginTwoFactor`. */
export const twoFactorRouter = router({
  status: authedProcedure.query(({ ctx }) => twoFactorStatus(ctx.services.reads, ctx.user.id)),

  setup: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(twoFactorSetupInput)
    .mutation(({ ctx, input }) => setUpTwoFactor(ctx.services, ctx.user, input.password, ctx.services.clock())),

  confirm: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(twoFactorConfirmInput)
    .mutation(({ ctx, input }) => confirmTwoFactor(ctx.services, ctx.user.id, input.code, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),

  disable: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(twoFactorProofInput)
    .mutation(({ ctx, input }) => disableTwoFactor(ctx.services, ctx.user.id, input, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),

  recoveryCodes: authedProcedure
    .meta({ rateLimit: 'auth' })
    .input(twoFactorProofInput)
    .mutation(({ ctx, input }) => regenerateRecoveryCodes(ctx.services, ctx.user.id, input, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),
})
