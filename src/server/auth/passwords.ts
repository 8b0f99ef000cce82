import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/**
 * scrypt, memory-hard: N=2^15, r=8, p=3 (32 MiB), one of OWASP's recommended settings.
 * The parameters travel in the stored string, so they can be raised later without breaking old hashes.
 */
export const DEFAULT_PASSWORD_COST = 15
const PARAMS = { N: 2 ** DEFAULT_PASSWORD_COST, r: 8, p: 3 }
const KEY_LENGTH = 32

/** What new hashes cost: N is 2^cost. Only `PLAZA_PASSWORD_COST` changes it (the test suite's, to save CPU). */
let params = PARAMS

/**
 * Sets the cost (log2 of scrypt's N) of the hashes made from now on, for the whole process; hashes
 * made at any other cost still verify, as their parameters are stored with them.
 */
export function setPasswordCost(cost: number) {
  params = { ...PARAMS, N: 2 ** cost }
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r }
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
  )
}

/** Hashes a password as `scrypt$N$r$p$salt$key` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, params)
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !key) return false
  const expected = Buffer.from(key, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/**
 * A hash of a random password (made once and thrown away, with PARAMS), checked when the account
 * does not exist so both paths cost the same. A constant, not hashed on import: that scrypt kept
 * every process that imports the accounts module busy for a quarter of a second (a one-shot CLI
 * command waited for it before exiting). test/server/auth.test.ts checks it uses PARAMS.
 */
export const DECOY_HASH = 'scrypt$32768$8$3$LoCr3EfcUjIX7M8WiwIzXA$bNo3RznnmGJ4Najuvx4dURpQkK36t6iLaJUI_1PMsT4'

const decoys = new Map<number, Promise<string>>([[PARAMS.N, Promise.resolve(DECOY_HASH)]])

/** The decoy at the cost new hashes have now: DECOY_HASH by default, else one made (once) at that cost. */
export function decoyHash(): Promise<string> {
  let decoy = decoys.get(params.N)
  if (!decoy) decoys.set(params.N, (decoy = hashPassword(randomBytes(16).toString('base64url'))))
  return decoy
}

/** The cost parameters new hashes get by default, as stored (`scrypt$N$r$p$`). */
export const HASH_PREFIX = ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, ''].join('$')
