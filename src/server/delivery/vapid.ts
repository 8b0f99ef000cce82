/**
 * The server's VAPID key pair (RFC 8292): configured (`PLAZA_VAPID_PUBLIC_KEY`,
 * `PLAZA_VAPID_PRIVATE_KEY`) or generated at the first start and kept in `instance_keys`, so every
 * process and host sharing the database signs with the same pair and apps subscribe once. The
 * first writer wins: a process that generated a pair another one stored first uses the stored one.
 */
import { createECDH } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'

export interface VapidKeys {
  /** Uncompressed P-256 point, base64url: what `applicationServerKey` takes in the browser's PushManager.subscribe. */
  publicKey: string
  privateKey: string
}

const KEY_NAME = 'vapid'

/** A new P-256 key pair, as web-push makes them (65-byte public point, 32-byte private scalar). */
export function generateVapidKeys(): VapidKeys {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  // The scalar is a number: one with leading zero bytes comes back shorter than 32.
  const scalar = ecdh.getPrivateKey()
  const privateKey = Buffer.concat([Buffer.alloc(32 - scalar.length), scalar])
  return { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey: privateKey.toString('base64url') }
}

/** Whether `publicKey` is the public half of `privateKey` (a configured pair that is not one would sign tokens no push service accepts). */
export function isKeyPair(keys: VapidKeys): boolean {
  try {
    const ecdh = createECDH('prime256v1')
    ecdh.setPrivateKey(Buffer.from(keys.privateKey, 'base64url'))
    return ecdh.getPublicKey().equals(Buffer.from(keys.publicKey, 'base64url'))
  } catch {
    return false
  }
}

/** The configured pair, else the stored one, else a new one stored now (first writer wins). */
export async function loadVapidKeys(db: Db, configured: VapidKeys | null, now: Date): Promise<VapidKeys> {
  if (configured) return configured
  const read = async () => {
    const [row] = await db.values<[string]>(sql`select value from instance_keys where name = ${KEY_NAME}`)
    return row ? (JSON.parse(row[0]) as VapidKeys) : null
  }
  const stored = await read()
  if (stored) return stored
  await db.run(sql`
    insert into instance_keys (name, value, created_at) values (${KEY_NAME}, ${JSON.stringify(generateVapidKeys())}, ${now.getTime()})
    on conflict (name) do nothing`)
  return (await read())!
}
