/**
 * Connections at the edge (docs/edge.md#connections): a cap on the connections one peer address
 * may hold open, so that one address cannot take every slot of `PLAZA_MAX_CONNECTIONS`, and the
 * one way an answer is written to a socket that has no request object (refusals here, malformed
 * HTTP and timed-out request heads in app.ts). Each server process (each worker of `--workers N`)
 * applies the cap to the connections it is handed.
 */
import type http from 'node:http'
import type { Socket } from 'node:net'
import { errorEnvelope } from '../shared/envelope.js'
import { isTrustedProxy, normaliseAddress } from './client-address.js'
import type { TrustProxy } from './config.js'

/** Sockets answered by `answerSocket`: whatever request node still reads on them is not served. */
const answered = new WeakSet<Socket>()

/**
 * Writes a complete HTTP/1.1 answer in the envelope straight to `socket` and closes it once the
 * answer is out: ended alone, it would stay half-open, counted against `PLAZA_MAX_CONNECTIONS`,
 * for as long as the peer neither reads nor closes. `bodyless`: the answer to a HEAD.
 */
export function answerSocket(socket: Socket, status: number, text: string, message: string, bodyless = false) {
  answered.add(socket)
  const body = JSON.stringify(errorEnvelope(message))
  socket.end(`HTTP/1.1 ${status} ${text}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${bodyless ? '' : body}`)
  socket.once('finish', () => socket.destroy())
}

export interface ConnectionGuard {
  /** Connections this process holds open now (refused ones not counted). */
  readonly open: number
  /** Connections refused over the per-address cap since start. */
  readonly refused: number
  /** False for a request on a connection already answered and closing: node may still parse one the peer sent meanwhile. */
  admits(req: http.IncomingMessage): boolean
}

/**
 * Refuses a connection past `maxPerAddress` open ones from its peer address with a 429 and closes
 * it at once. A proxy named in `PLAZA_TRUST_PROXY` is exempt: every client arrives through it.
 */
export function capConnections(server: http.Server, options: { maxPerAddress: number; trustProxy: TrustProxy }): ConnectionGuard {
  const perAddress = new Map<string, number>()
  let open = 0
  let refused = 0
  server.on('connection', (socket: Socket) => {
    const address = normaliseAddress(socket.remoteAddress)
    const capped = address !== null && !isTrustedProxy(address, options.trustProxy)
    if (capped && (perAddress.get(address) ?? 0) >= options.maxPerAddress) {
      refused++
      answerSocket(socket, 429, 'Too Many Requests', 'Too many open connections from this address; close some and try again')
      return
    }
    open++
    socket.once('close', () => open--)
    if (!capped) return
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1)
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1
      if (left > 0) perAddress.set(address, left)
      else perAddress.delete(address)
    })
  })
  return {
    get open() {
      return open
    },
    get refused() {
      return refused
    },
    admits: (req) => !answered.has(req.socket),
  }
}
