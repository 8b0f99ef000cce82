/**
 * A Web Push service on loopback, standing in for the browsers' push services (Mozilla autopush,
 * FCM, Apple), none of which can run here. It speaks their side of RFC 8030 (a POST per message
 * to the subscription's endpoint, answered 201 Created, or whatever a test scripts: 429 with
 * Retry-After, 503, 410 Gone), and plays the user agent too: each subscription it hands out has a
 * real P-256 key pair and auth secret, and every message is decrypted here with the private key by
 * RFC 8291 (aes128gcm, written out below with node:crypto, not with the library Plaza encrypts
 * with), and its VAPID token (RFC 8292) is verified against the server's public key.
 */
import { createECDH, createHmac, createDecipheriv, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface UserAgentKeys {
  ecdh: ECDH
  /** The subscription's keys as a browser's PushSubscription.toJSON() has them. */
  p256dh: string
  auth: string
}

export interface ReceivedPush {
  /** Which subscription (endpoint path) it was posted to. */
  path: string
  headers: http.IncomingHttpHeaders
  /** The decrypted payload, parsed. */
  payload: any
  /** The VAPID token's claims, once its signature checked out against `k`. */
  jwt: { aud: string; exp: number; sub: string }
  /** The `k` of the Authorization header: the server's VAPID public key. */
  vapidKey: string
  /** What the service answered. */
  status: number
}

export interface PushService {
  url: string
  /** A new subscription: its endpoint on this service and the user agent's keys. */
  subscription(name?: string): { endpoint: string; keys: { p256dh: string; auth: string } }
  received: ReceivedPush[]
  /** Resolves once `count` messages in all have been received (and answered). */
  waitFor(count: number): Promise<ReceivedPush[]>
  /** Answers the next messages with these (status, headers) before going back to 201. */
  script(...answers: Array<{ status: number; headers?: Record<string, string> }>): void
  /** Errors found in a message (a bad signature, a missing header, undecryptable body): must stay empty. */
  problems: string[]
  close(): Promise<void>
}

const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest()

/** RFC 8291 §3.4 and RFC 8188: the plaintext of one aes128gcm message for the user agent `ua`. */
export function decryptAes128gcm(body: Buffer, ua: { ecdh: ECDH; auth: Buffer }): Buffer {
  const salt = body.subarray(0, 16)
  const rs = body.readUInt32BE(16)
  const idlen = body[20]
  const asPublic = body.subarray(21, 21 + idlen)
  const records = body.subarray(21 + idlen)
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not an uncompressed P-256 point`)
  if (records.length > rs) throw new Error('more than one record: the payload should fit in one')
  const uaPublic = ua.ecdh.getPublicKey()
  const secret = ua.ecdh.computeSecret(asPublic)
  const prkKey = hmac(ua.auth, secret)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic])
  const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])]))
  const prk = hmac(salt, ikm)
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16)
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12)
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce)
  decipher.setAuthTag(records.subarray(records.length - 16))
  const padded = Buffer.concat([decipher.update(records.subarray(0, records.length - 16)), decipher.final()])
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('the last record has no 0x02 delimiter')
  return padded.subarray(0, end)
}

/** Checks an ES256 JWT's signature with the P-256 public key `k` (base64url, uncompressed); answers its claims. */
export function verifyVapidJwt(token: string, k: string): { aud: string; exp: number; sub: string } {
  const [header, payload, signature] = token.split('.')
  const point = Buffer.from(k, 'base64url')
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') }, format: 'jwk' })
  const ok = verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))
  if (!ok) throw new Error('the VAPID token signature does not verify with k')
  const head = JSON.parse(Buffer.from(header, 'base64url').toString())
  if (head.alg !== 'ES256') throw new Error(`VAPID alg ${head.alg}`)
  return JSON.parse(Buffer.from(payload, 'base64url').toString())
}

export async function startPushService(): Promise<PushService> {
  const agents = new Map<string, { ecdh: ECDH; auth: Buffer }>()
  const received: ReceivedPush[] = []
  const problems: string[] = []
  const scripted: Array<{ status: number; headers?: Record<string, string> }> = []
  const waiters: Array<{ count: number; resolve: (all: ReceivedPush[]) => void }> = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? ''
      const agent = agents.get(path)
      const answer = scripted.shift() ?? { status: 201 }
      try {
        if (req.method !== 'POST') throw new Error(`${req.method} instead of POST`)
        if (!agent) throw new Error(`no subscription at ${path}`)
        if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`Content-Encoding ${req.headers['content-encoding']}`)
        const auth = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? '')
        if (!auth) throw new Error(`Authorization is not a VAPID header: ${req.headers.authorization}`)
        const jwt = verifyVapidJwt(auth[1], auth[2])
        const payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), agent).toString('utf8'))
        received.push({ path, headers: req.headers, payload, jwt, vapidKey: auth[2], status: answer.status })
      } catch (error) {
        problems.push(String((error as Error).message ?? error))
      }
      res.writeHead(answer.status, answer.status === 201 ? { location: `/message/${received.length}` } : (answer.headers ?? {})).end()
      for (const waiter of [...waiters]) {
        if (received.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve(received.slice())
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let counter = 0
  return {
    url,
    received,
    problems,
    subscription(name = `s${++counter}`) {
      const ecdh = createECDH('prime256v1')
      ecdh.generateKeys()
      const auth = randomBytes(16)
      agents.set(`/push/${name}`, { ecdh, auth })
      return { endpoint: `${url}/push/${name}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } }
    },
    waitFor(count) {
      if (received.length >= count) return Promise.resolve(received.slice())
      return new Promise((resolve) => waiters.push({ count, resolve }))
    },
    script(...answers) {
      scripted.push(...answers)
    },
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
