import { twoFactorConfirmInput, twoFactorProofInput, twoFactorSetupInput } from '../../shared/schemas/auth.js'
import { confirmTwoFactor, disableTwoFactor, regenerateRecoveryCodes, setUpTwoFactor, twoFactorStatus } from '../domain/two-factor.js'
import type { ErrorCases } from '../errors.js'
import { authedProcedure, codeAttempts, guardPassword, router } from '../trpc.js'

/** Turning it off and new recovery codes take the password and a code. */
const PROOF_ERRORS: ErrorCases = { 403: 'The password or the code is wrong', 409: 'Two-factor login is not on' }

/**
 * Two-factor login (TOTP) of the caller's own account; the login's second step is `auth.loginTwoFactor`.
 * A wrong password counts in the `auth` class per address and per account (guardPassword), a wrong
 * code in the `account` class (codeAttempts).
 */
export const twoFactorRouter = router({
  status: authedProcedure.query(({ ctx }) => twoFactorStatus(ctx.services.reads, ctx.user.id)),

  setup: authedProcedure
    .meta({ errors: { 403: 'The password is wrong', 409: 'Two-factor login is already on' } })
    .input(twoFactorSetupInput)
    .mutation(({ ctx, input }) => guardPassword(ctx, `account:${ctx.user.id}`, () => setUpTwoFactor(ctx.services, ctx.user, input.password, ctx.services.clock()))),

  confirm: authedProcedure
    .meta({ errors: { 400: 'Two-factor login was not set up first, or the code does not match', 409: 'Two-factor login is already on' } })
    .input(twoFactorConfirmInput)
    .mutation(({ ctx, input }) => confirmTwoFactor(ctx.services, ctx.user.id, input.code, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),

  disable: authedProcedure
    .meta({ errors: PROOF_ERRORS })
    .input(twoFactorProofInput)
    .mutation(({ ctx, input }) =>
      guardPassword(ctx, `account:${ctx.user.id}`, () => disableTwoFactor(ctx.services, ctx.user.id, input, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),
    ),

  recoveryCodes: authedProcedure
    .meta({ errors: PROOF_ERRORS })
    .input(twoFactorProofInput)
    .mutation(({ ctx, input }) =>
      guardPassword(ctx, `account:${ctx.user.id}`, () => regenerateRecoveryCodes(ctx.services, ctx.user.id, input, codeAttempts(ctx, ctx.user.id), ctx.services.clock())),
    ),
})
