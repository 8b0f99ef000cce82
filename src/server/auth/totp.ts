/**
 * Time-based one-time passwords (RFC 6238; HOTP's RFC 4226 underneath) with the `otpauth`
 * library: SHA-1, 6 digits, 30-second steps, what every authenticator app reads from an
 * `otpauth://totp/` URI. Time is passed in (the services' clock), never read here. Recovery codes
 * are ten random one-time codes, kept as SHA-256 hashes like every other secret Plaza hands out.
 */
import { createHash, randomInt } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'

export const TOTP_PERIOD_S = 30
const DIGITS = 6
/** Steps of clock drift accepted either side (RFC 6238 §5.2 recommends at most one). */
export const TOTP_WINDOW = 1
export const RECOVERY_CODE_COUNT = 10

/** A new shared secret: 160 bits (RFC 4226 §4's recommendation), base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

function totpOf(secret: string, label = '', issuer = ''): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: TOTP_PERIOD_S })
}

/** The Key Uri Format URI an authenticator app scans: `otpauth://totp/Issuer:label?secret=...&issuer=...`. */
export function otpauthUrl(secret: string, label: string, issuer: string): string {
  return totpOf(secret, label, issuer).toString()
}

/** The time step a moment falls in (RFC 6238's T). */
export function stepAt(now: Date): number {
  return Math.floor(now.getTime() / 1000 / TOTP_PERIOD_S)
}

/** The code for `now` (tests play the authenticator app with it). */
export function totpCodeAt(secret: string, now: Date): string {
  return totpOf(secret).generate({ timestamp: now.getTime() })
}

/**
 * The step `code` belongs to, within TOTP_WINDOW steps of `now`, or null. The caller accepts it
 * only if that step is later than the last one accepted (RFC 6238 §5.2: a code is used once).
 */
export function matchingStep(secret: string, code: string, now: Date): number | null {
  const delta = totpOf(secret).validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW })
  return delta === null ? null : stepAt(now) + delta
}

/** Lower-case letters and digits without the ones that read alike (0/o, 1/l/i). */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

/** Ten codes of ten characters (about 49 bits each), shown `xxxxx-xxxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
    return `${chars.slice(0, 5)}-${chars.slice(5)}`
  })
}

/** How a recovery code is stored: the SHA-256 of its ten characters (dash, spaces and case dropped, as the input schema does). */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code.replace(/[\s-]+/g, '').toLowerCase()).digest('hex')
}
