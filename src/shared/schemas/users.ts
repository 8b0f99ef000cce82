import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { altText, id, pagination, refused, uploadPath, username } from './common.js'

/** A user named by numeric id or by username (paths take either). */
export const userRef = z.union([id('user_id'), username], { error: 'user_id must be a user id or a username' })

/** Without `user_id` the caller's own profile; `user_id` may also be a username. */
export const profileInput = z.object({ user_id: userRef.optional() }).default({})
export type ProfileInput = z.input<typeof profileInput>

/**
 * Only the fields sent change. `avatar` is a path returned by an avatar upload; an empty string or
 * null removes the avatar. The account's other fields are refused, each naming the route that
 * changes it (or saying none does).
 */
export const updateProfileInput = z
  .object({
    full_name: z.string({ error: 'full_name must be a string' }).trim().max(TEXT_LIMITS.fullName, `full_name must be at most ${TEXT_LIMITS.fullName} characters`),
    bio: z.string({ error: 'bio must be a string' }).trim().max(TEXT_LIMITS.bio, `bio must be at most ${TEXT_LIMITS.bio} characters`),
    avatar: z.preprocess((v) => (v === null ? '' : v), z.union([z.literal(''), uploadPath(['avatars'])], { error: 'avatar must be a path returned by an avatar upload (uploads/avatars/...)' })),
    is_private: z.boolean({ error: 'is_private must be true or false' }),
    avatar_alt: altText('avatar_alt'),
    username: refused('username cannot be changed: it is chosen at registration (POST /api/mobile/auth/register) and no route changes it'),
    email: refused('email is changed with PUT /api/mobile/user/email (email, password), not here'),
    password: refused('password is changed with PUT /api/mobile/user/password (current_password, new_password), not here'),
    is_verified: refused("is_verified is set by the server's operator (plaza admin verify), not by the user"),
  })
  .partial()
export type UpdateProfileInput = z.input<typeof updateProfileInput>
export type UpdateProfile = z.output<typeof updateProfileInput>

export const followInput = z.object({ user_id: userRef })
export type FollowInput = z.input<typeof followInput>

export const followListInput = z.object({ user_id: userRef, ...pagination })
export type FollowListInput = z.input<typeof followListInput>
