import { z } from 'zod'
import { id, username } from './common.js'

export const TEXT_LIMITS = { post: 2200, comment: 1000, bio: 500, fullName: 100, storyText: 500 } as const

export const email = z.string({ error: 'email is required' }).trim().max(254, 'email is too long').pipe(z.email('email must be a valid address'))
export const password = z
  .string({ error: 'password is required' })
  .min(8, 'password must be at least 8 characters')
  .max(1024, 'password is too long')

export const registerInput = z.object({
  username,
  email,
  password,
  full_name: z.string().trim().max(TEXT_LIMITS.fullName, `full_name must be at most ${TEXT_LIMITS.fullName} characters`).default(''),
})
export type RegisterInput = z.input<typeof registerInput>

/** Login takes the email (or, as a convenience, the username) in `email`. */
export const loginInput = z.object({
  email: z.string({ error: 'email is required' }).trim().min(1, 'email is required').max(254),
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
})
export type LoginInput = z.input<typeof loginInput>

/** The new password follows register's rules; the current one is only checked, so any string up to the limit. */
export const changePasswordInput = z.object({
  current_password: z.string({ error: 'current_password is required' }).min(1, 'current_password is required').max(1024),
  new_password: z
    .string({ error: 'new_password is required' })
    .min(8, 'new_password must be at least 8 characters')
    .max(1024, 'new_password is too long'),
})
export type ChangePasswordInput = z.input<typeof changePasswordInput>

export const sessionIdInput = z.object({ id: id('id') })

/** Deleting the account asks for the password again, whatever the token. */
export const deleteAccountInput = z.object({
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
})
export type DeleteAccountInput = z.input<typeof deleteAccountInput>
