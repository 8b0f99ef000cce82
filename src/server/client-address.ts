import type { IncomingMessage } from 'node:http'
import { BlockList, isIP } from 'node:net'
import type { TrustProxy } from './config.js'

/**
 * An address as Plaza keys it: ports and IPv6 brackets stripped, IPv6 lower-cased, IPv4-mapped
 * IPv6 (`::ffff:1.2.3.4`, what a dual-stack socket reports) as plain IPv4; null when it is not an
 * IP address (`unknown`, an obfuscated `_hidden` node, garbage).
 */
export function normaliseAddress(value: string | undefined): string | null {
  let text = value?.trim() ?? ''
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)
  if (bracketed) text = bracketed[1]
  else if (/^[\d.]+:\d{1,5}$/.test(text)) text = text.slice(0, text.lastIndexOf(':'))
  text = text.toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (mapped) text = mapped[1]
  return isIP(text) ? text : null
}

/** The `for=` nodes of an RFC 7239 `Forwarded` header, in order (client first). */
function forwardedFor(header: string): string[] {
  return header.split(',').map((element) => {
    const pair = element
      .split(';')
      .map((part) => part.trim())
      .find((part) => /^for=/i.test(part))
    return pair ? pair.slice(4).replace(/^"(.*)"$/, '$1') : ''
  })
}

/** The addresses proxies reported, client first: `X-Forwarded-For`, or `Forwarded` when a request has none. */
function forwardedChain(req: IncomingMessage): string[] {
  const xff = req.headers['x-forwarded-for']
  if (typeof xff === 'string' && xff.trim() !== '') return xff.split(',')
  const forwarded = req.headers.forwarded
  if (typeof forwarded === 'string' && forwarded.trim() !== '') return forwardedFor(forwarded)
  return []
}

const blockLists = new WeakMap<string[], BlockList>()

function trustedList(entries: string[]): BlockList {
  let list = blockLists.get(entries)
  if (list) return list
  list = new BlockList()
  for (const entry of entries) {
    const [address, prefix] = entry.split('/')
    const normalised = normaliseAddress(address)
    if (!normalised) continue
    const family = isIP(normalised) === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(normalised, family)
    else list.addSubnet(normalised, Number(prefix), family)
  }
  blockLists.set(entries, list)
  return list
}

/**
 * Whether the peer at `address` is a proxy `PLAZA_TRUST_PROXY` names: one in its list, or, with a
 * hop count, any peer (every connection then comes through the proxy in front).
 */
export function isTrustedProxy(address: string, trustProxy: TrustProxy): boolean {
  if (trustProxy.kind === 'none') return false
  if (trustProxy.kind === 'hops') return trustProxy.hops > 0
  return trustedList(trustProxy.entries).check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
}

/**
 * The client's address for per-address rate limits. Without `PLAZA_TRUST_PROXY` it is the
 * socket's: forwarding headers are anyone's to write. With it, the walk goes from the socket
 * leftwards through the forwarded chain while the current hop is a trusted proxy (within `hops`
 * of Plaza, or in the list); the first untrusted address is the client. A malformed entry ends
 * the walk at the last address a trusted proxy vouched for.
 */
export function clientAddress(req: IncomingMessage, trustProxy: TrustProxy): string {
  const socket = normaliseAddress(req.socket.remoteAddress)
  if (!socket) return 'unknown'
  if (trustProxy.kind === 'none') return socket
  const trusts =
    trustProxy.kind === 'hops'
      ? (_address: string, hop: number) => hop < trustProxy.hops
      : (address: string) => trustedList(trustProxy.entries).check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
  const chain = forwardedChain(req)
  let client = socket
  for (let hop = 0; hop < chain.length && trusts(client, hop); hop++) {
    const next = normaliseAddress(chain[chain.length - 1 - hop])
    if (!next) break
    client = next
  }
  return client
}
