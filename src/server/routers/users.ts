import { paginationInput } from '../../shared/schemas/common.js'
import { followInput, followListInput, profileInput, updateProfileInput } from '../../shared/schemas/users.js'
import { follow, listFollows, unfollow } from '../domain/follows.js'
import { blockUser, listRelations, muteUser, unblockUser, unmuteUser } from '../domain/relations.js'
import { changeEmailInput, changePasswordInput, deleteAccountInput } from '../../shared/schemas/auth.js'
import { changeEmail, emailState } from '../domain/recovery.js'
import { deleteAccount } from '../domain/removal.js'
import { changePassword } from '../domain/sessions.js'
import { approveFollowRequest, denyFollowRequest, listFollowRequests } from '../domain/follow-requests.js'
import { updateProfile } from '../domain/profile.js'
import { loadProfile } from '../domain/users.js'
import { authedProcedure, enforceRateLimit, guardPassword, optionalAuthProcedure, router } from '../trpc.js'

export const usersRouter = router({
  profile: authedProcedure
    .input(profileInput)
    .query(({ ctx, input }) => loadProfile(ctx.services.reads, input.user_id ?? ctx.user.id, ctx.user.id, ctx.services.clock())),

  update: authedProcedure
    .input(updateProfileInput)
    .mutation(({ ctx, input }) => updateProfile(ctx.services.db, ctx.services.fanout, ctx.user.id, input, ctx.services.clock())),

  follow: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => follow(ctx.services.db, ctx.services.reads, ctx.services.warm, ctx.services.fanout, ctx.user.id, input.user_id, ctx.services.clock())),

  unfollow: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => unfollow(ctx.services.db, ctx.services.reads, ctx.services.warm, ctx.user.id, input.user_id, ctx.services.clock())),

  followers: optionalAuthProcedure
    .input(followListInput)
    .query(({ ctx, input }) => listFollows(ctx.services, 'followers', input.user_id, ctx.user?.id ?? null, input)),

  following: optionalAuthProcedure
    .input(followListInput)
    .query(({ ctx, input }) => listFollows(ctx.services, 'following', input.user_id, ctx.user?.id ?? null, input)),

  /** Requests to follow the caller's private account, newest first (the owner's only). */
  followRequests: authedProcedure.input(paginationInput).query(({ ctx, input }) => listFollowRequests(ctx.services, ctx.user.id, input)),

  approveFollowRequest: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => approveFollowRequest(ctx.services.db, ctx.services.reads, ctx.services.fanout, ctx.user.id, input.user_id, ctx.services.clock())),

  denyFollowRequest: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => denyFollowRequest(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id)),

  block: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => blockUser(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id, ctx.services.clock())),

  unblock: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => unblockUser(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id)),

  blocked: authedProcedure.input(paginationInput).query(({ ctx, input }) => listRelations(ctx.services, 'blocked', ctx.user.id, input)),

  mute: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => muteUser(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id, ctx.services.clock())),

  unmute: authedProcedure
    .input(followInput)
    .mutation(({ ctx, input }) => unmuteUser(ctx.services.db, ctx.services.reads, ctx.user.id, input.user_id)),

  muted: authedProcedure.input(paginationInput).query(({ ctx, input }) => listRelations(ctx.services, 'muted', ctx.user.id, input)),

  /** Each checks the current password: a wrong one counts in the `auth` class, per address and per account (guardPassword). */
  changePassword: authedProcedure
    .meta({ unverified: 'allowed', errors: { 403: 'The current password is wrong' } })
    .input(changePasswordInput)
    .mutation(({ ctx, input }) =>
      guardPassword(ctx, `account:${ctx.user.id}`, () => changePassword(ctx.services.db, ctx.user, ctx.sessionId, input, ctx.services.clock())),
    ),

  /** The caller's address, whether it is verified, and the one it is changing to. */
  email: authedProcedure.meta({ unverified: 'allowed' }).query(({ ctx }) => emailState(ctx.services, ctx.user.id)),

  /** Changes the caller's address (after the password): pending until the link mailed to it is opened, when mail is set up. */
  changeEmail: authedProcedure
    .meta({
      unverified: 'allowed',
      errors: { 400: 'The address is already the account\'s', 403: 'The password is wrong', 409: 'Another account has that address' },
    })
    .input(changeEmailInput)
    .mutation(async ({ ctx, input }) => {
      if (ctx.services.delivery.mail.configured) await enforceRateLimit(ctx, 'account', `mail:user:${ctx.user.id}`)
      return guardPassword(ctx, `account:${ctx.user.id}`, () => changeEmail(ctx.services, ctx.user, input, ctx.services.clock()))
    }),

  deleteAccount: authedProcedure
    .meta({ unverified: 'allowed', errors: { 403: 'The password is wrong' } })
    .input(deleteAccountInput)
    .mutation(async ({ ctx, input }) => {
      await guardPassword(ctx, `account:${ctx.user.id}`, () => deleteAccount(ctx.services, ctx.user.id, input.password))
      return null
    }),
})
