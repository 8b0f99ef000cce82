/** Answers of the account-security routes of issue 48: email verification, password reset and two-factor login. docs/push-email-2fa.md. */
import { z } from 'zod'
import { session } from './responses.js'

const dateTime = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)

export const emailState = z
  .strictObject({
    email: z.string().describe('The address the account uses'),
    email_verified: z.boolean().describe('Whether its owner has opened a link mailed to it'),
    pending_email: z.string().nullable().describe('An address the account is changing to, once the link mailed to it is opened; else null'),
  })
  .meta({ id: 'EmailState', description: "The account's email address and whether it is verified" })

export const loginChallenge = z
  .strictObject({
    two_factor_required: z.literal(true),
    challenge_token: z.string().describe('Send it to POST /auth/login/2fa with a code; it works for 5 minutes and 5 tries'),
    expires_at: dateTime,
    methods: z.array(z.enum(['totp', 'recovery_code'])),
  })
  .meta({ id: 'LoginChallenge', description: 'The password was right and two-factor login is on: a code is needed for the session' })

export const loginResult = z.union([session, loginChallenge]).meta({ id: 'LoginResult', description: 'A session, or a two-factor challenge when two-factor login is on' })

export const twoFactorStatus = z
  .strictObject({
    enabled: z.boolean().describe('Whether login asks for a code'),
    pending: z.boolean().describe('Set up but not yet confirmed with a first code'),
    recovery_codes_left: z.number().int().nonnegative(),
  })
  .meta({ id: 'TwoFactorStatus', description: "The account's two-factor login" })

export const twoFactorSetup = z
  .strictObject({
    secret: z.string().describe('The shared secret, base32, for apps that take it typed'),
    otpauth_url: z.string().describe('otpauth://totp/... (Key Uri Format): what the QR code holds'),
    qr_svg: z.string().describe('The otpauth URL as a QR code, an SVG document'),
    qr_png: z.string().describe('The same QR code as a PNG, a data: URL'),
  })
  .meta({ id: 'TwoFactorSetup', description: 'What an authenticator app needs; confirm with its first code to turn two-factor login on' })

export const recoveryCodes = z
  .strictObject({ recovery_codes: z.array(z.string()).describe('Ten one-time codes, shown this once: each logs in once instead of a code') })
  .meta({ id: 'RecoveryCodes', description: 'New recovery codes' })

export const passwordReset = z
  .strictObject({ revoked_sessions: z.number().int().nonnegative().describe('How many sessions of the account were revoked (all of them)') })
  .meta({ id: 'PasswordReset', description: 'The password was reset; every session of the account is revoked' })
