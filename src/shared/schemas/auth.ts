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

/** A mailed secret (a reset or verification link's `token`), as pasted: surrounding spaces do not count. */
const mailedToken = (name = 'token') => z.string({ error: `${name} is required` }).trim().min(1, `${name} is required`).max(200, `${name} is too long`)

/** `POST /auth/password/forgot`: the email, or the username, in `email` (as login takes it). */
export const forgotPasswordInput = z.object({
  email: z.string({ error: 'email is required' }).trim().min(1, 'email is required').max(254, 'email is too long'),
})
export type ForgotPasswordInput = z.input<typeof forgotPasswordInput>

/** `POST /auth/password/reset`: the mailed token and the new password (register's rules). */
export const resetPasswordInput = z.object({ token: mailedToken(), password })
export type ResetPasswordInput = z.input<typeof resetPasswordInput>

export const verifyEmailInput = z.object({ token: mailedToken() })

/** `PUT /user/email`: the new address, and the password again. */
export const changeEmailInput = z.object({
  email,
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
})
export type ChangeEmailInput = z.input<typeof changeEmailInput>

/** A TOTP code (6 digits; spaces, as authenticator apps show `123 456`, are dropped). */
export const totpCode = (name = 'code') =>
  z
    .string({ error: `${name} is required` })
    .transform((value) => value.replace(/\s+/g, ''))
    .pipe(z.string().regex(/^\d{6}$/, `${name} must be the 6 digits your authenticator app shows`))

/** A recovery code as handed out (`xxxxx-xxxxx`); case, spaces and the dash do not matter. */
export const recoveryCode = z
  .string({ error: 'recovery_code is required' })
  .transform((value) => value.replace(/[\s-]+/g, '').toLowerCase())
  .pipe(z.string().regex(/^[a-z0-9]{10}$/, 'recovery_code must be one of your ten recovery codes (xxxxx-xxxxx)'))

/** A code from the app, or a recovery code: exactly one of them. */
const secondFactor = {
  code: totpCode().optional(),
  recovery_code: recoveryCode.optional(),
}
const oneFactor = (value: { code?: string; recovery_code?: string }) => (value.code === undefined) !== (value.recovery_code === undefined)
const ONE_FACTOR = 'give code (from your authenticator app) or recovery_code, not both'

/** `POST /auth/login/2fa`: the challenge login answered, and a code or a recovery code. */
export const loginTwoFactorInput = z
  .object({ challenge_token: mailedToken('challenge_token'), ...secondFactor })
  .refine(oneFactor, ONE_FACTOR)
export type LoginTwoFactorInput = z.output<typeof loginTwoFactorInput>

/** `POST /auth/2fa/setup`: the password again. */
export const twoFactorSetupInput = z.object({ password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024) })

/** `POST /auth/2fa/confirm`: the first code the app shows. */
export const twoFactorConfirmInput = z.object({ code: totpCode() })

/** Turning two-factor off, or making new recovery codes: the password and a code (or a recovery code). */
export const twoFactorProofInput = z
  .object({ password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024), ...secondFactor })
  .refine(oneFactor, ONE_FACTOR)
export type TwoFactorProofInput = z.output<typeof twoFactorProofInput>
