/**
 * The only way Plaza fetches a URL a user gave it (decisions §6). A URL is a request the server
 * makes on the user's behalf, so without care it reaches what only the server can reach: the
 * cloud metadata service, the database port, the admin page on the loopback interface. Hence:
 * http/https only; every address the host resolves to must be public, checked before the first
 * request and before every redirect (at most 5); the connection goes to the address that was
 * checked (a second DNS answer cannot swap it, which is what DNS rebinding needs); the body is cut
 * past 10 MiB and the whole exchange past 10 s.
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { TRPCError } from '@trpc/server'
import type { Agent } from 'undici'
import type { ErrorCases } from './errors.js'

export const FETCH_MAX_BYTES = 10 * 1024 * 1024
export const FETCH_TIMEOUT_MS = 10_000
export const FETCH_MAX_REDIRECTS = 5

/** What a guarded fetch of a user-given URL can answer (ErrorCases in errors.ts). */
export const FETCH_ERRORS: ErrorCases = {
  400: 'The URL is not http(s), or names an address that is not public',
  413: 'The file at the URL is larger than the operation takes',
  422: 'The URL could not be fetched: its host does not resolve, its server answered an error, or it redirects too often',
  504: "The URL's server did not send the file in time",
}

/** What checking a user-given URL without fetching it (checkPublicUrl) can answer. */
export const URL_CHECK_ERRORS: ErrorCases = { 400: FETCH_ERRORS[400], 422: 'The URL\'s host does not resolve' }

export interface GuardedFetchOptions {
  /** The query or body field the URL came from, named in every refusal. */
  field?: string
  /** Loopback and private ranges allowed (`PLAZA_FETCH_ALLOW_PRIVATE=1`: tests only). */
  allowPrivate?: boolean
  maxBytes?: number
  timeoutMs?: number
  /** Resolves a host name to its addresses; injected by tests that need a name to resolve somewhere chosen. */
  resolve?: (hostname: string) => Promise<string[]>
  /** The request's Accept header (default: images first, as the image operations want). */
  accept?: string
}

/** What a `reader` of `guardedRead` gets once the final answer (2xx, after redirects) has arrived. */
export interface GuardedResponse {
  contentType: string | null
  /** Where the body comes from, after redirects. */
  url: string
  /**
   * The body, cut after `maxBytes` (the iteration then ends and `truncated()` is true) rather than
   * refused: a reader that wants a bounded prefix reads it, one that wants less stops early.
   */
  body: AsyncIterable<Buffer>
  truncated(): boolean
}

export interface FetchedBody {
  bytes: Buffer
  /** The Content-Type the server declared (callers sniff the bytes anyway). */
  contentType: string | null
  /** Where the bytes came from, after redirects. */
  url: string
}

type Family = 'ipv4' | 'ipv6'
interface Ranges {
  type: Family
  list: BlockList
}

/** One family's ranges, checked only against addresses of that family (BlockList would match IPv4 against `::ffff:0:0/96`). */
function cidrs(list: Array<[string, number]>, type: Family): Ranges {
  const block = new BlockList()
  for (const [address, prefix] of list) block.addSubnet(address, prefix, type)
  return { type, list: block }
}

const inRanges = (ranges: Ranges, address: string, type: Family) => ranges.type === type && ranges.list.check(address, type)

/** Private networks and loopback: reachable with `allowPrivate`, never otherwise. */
const PRIVATE = [
  cidrs([['10.0.0.0', 8], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]], 'ipv4'),
  cidrs([['::1', 128], ['fc00::', 7]], 'ipv6'),
]

/** Never public, whatever the configuration: metadata services live on link-local addresses. */
const NEVER: Array<[Ranges, string]> = [
  [cidrs([['0.0.0.0', 8]], 'ipv4'), 'an unspecified ("this network") address'],
  [cidrs([['100.64.0.0', 10]], 'ipv4'), 'a carrier-grade NAT address'],
  [cidrs([['169.254.0.0', 16]], 'ipv4'), 'a link-local address'],
  [cidrs([['fe80::', 10], ['fec0::', 10]], 'ipv6'), 'a link-local address'],
  [cidrs([['224.0.0.0', 4]], 'ipv4'), 'a multicast address'],
  [cidrs([['ff00::', 8]], 'ipv6'), 'a multicast address'],
  [cidrs([['240.0.0.0', 4]], 'ipv4'), 'a reserved or broadcast address'],
  // IETF special-purpose, documentation and benchmarking ranges: not on the public internet.
  [cidrs([['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24]], 'ipv4'), 'a special-purpose address'],
  // Mapped, compatible, NAT64, 6to4 and Teredo addresses carry an IPv4 address inside: refused
  // rather than unwrapped, as a public host has a plain address of its own.
  [cidrs([['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['2001::', 23], ['100::', 64], ['2001:db8::', 32]], 'ipv6'), 'an IPv6 address that embeds another address or is reserved'],
]

const IPV4_COMPATIBLE = cidrs([['::', 96]], 'ipv6')

/** Why `address` may not be fetched, or null when it may. */
export function refusalOf(address: string, allowPrivate = false): string | null {
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  const type = family === 4 ? 'ipv4' : 'ipv6'
  // IPv4-compatible `::a.b.c.d` (deprecated) and `::` itself; `::1`, in the same /96, is loopback.
  if (type === 'ipv6' && inRanges(IPV4_COMPATIBLE, address, type) && !inRanges(PRIVATE[1], address, type)) return 'an IPv6 address that embeds another address or is reserved'
  for (const [ranges, reason] of NEVER) if (inRanges(ranges, address, type)) return reason
  if (!allowPrivate && PRIVATE.some((ranges) => inRanges(ranges, address, type))) return 'a private or loopback address'
  return null
}

const refuse = (field: string, message: string) => new TRPCError({ code: 'BAD_REQUEST', message: `${field}: ${message}` })

/** Reads a URL the user gave: only http(s), no credentials; refusals are 400 naming `field`, as every fetch's are. */
export function parseUrl(text: string, field: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw refuse(field, 'not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(field, `only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}`)
  if (url.username || url.password) throw refuse(field, 'a URL with a user name or password is not fetched')
  return url
}

/** The system resolver cannot be cancelled; the time limit still ends the wait for it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(new Error('timed out'))
    if (signal.aborted) return abort()
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

async function systemResolve(hostname: string): Promise<string[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map((answer) => answer.address)
}

/** The address to connect to: every address of the host must be allowed (a host that is partly private is refused). */
async function checkedAddress(url: URL, field: string, options: GuardedFetchOptions, signal: AbortSignal): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = await untilAborted((options.resolve ?? systemResolve)(host), signal)
    } catch (error) {
      if (signal.aborted) throw error
      throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the host ${host} could not be resolved` })
    }
    if (addresses.length === 0) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the host ${host} has no address` })
  }
  for (const address of addresses) {
    const reason = refusalOf(address, options.allowPrivate)
    if (reason) throw refuse(field, `${host === address ? address : `${host} resolves to ${address}, which`} is ${reason}; only public addresses are fetched`)
  }
  return addresses[0]
}

/** A connection pinned to `address`: the socket's own DNS lookup answers the checked address and nothing else. */
function pinnedAgent(Agent: typeof import('undici').Agent, address: string, timeoutMs: number): Agent {
  const family = isIP(address)
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }
  return new Agent({ connect: { lookup, timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 1, pipelining: 0 })
}

/** Drops a body we will not read; undici reports the abort as an 'error', which would otherwise end the process. */
function discard(body: NodeJS.ReadableStream & { destroy(): void }) {
  body.on('error', () => {})
  body.destroy()
}

const tooLarge = (field: string, max: number) =>
  new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `${field}: the file is larger than ${max / (1024 * 1024)} MiB` })

/**
 * Fetches `text` (GET) within the guard's rules and returns its bytes. Refusals are 400 (scheme,
 * address), 413 (size), 422 (the remote could not be reached or answered an error) and 504 (time).
 */
export async function guardedFetch(text: string, options: GuardedFetchOptions = {}): Promise<FetchedBody> {
  const field = options.field ?? 'url'
  const maxBytes = options.maxBytes ?? FETCH_MAX_BYTES
  return guardedRequest(text, options, async (response, body) => {
    const declared = Number(response.headers['content-length'])
    if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(field, maxBytes)
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of body) {
      size += chunk.length
      if (size > maxBytes) throw tooLarge(field, maxBytes)
      chunks.push(chunk)
    }
    return { bytes: Buffer.concat(chunks), contentType: contentTypeOf(response.headers), url: response.url }
  })
}

/**
 * Fetches `text` (GET) within the guard's rules and hands the answer to `reader`, which reads as
 * much of the body as it wants: at most `maxBytes` of it (the rest is never read), within the same
 * time limit. The body is dropped once `reader` settles. Refusals as `guardedFetch`, but no 413.
 */
export async function guardedRead<T>(text: string, options: GuardedFetchOptions, reader: (response: GuardedResponse) => Promise<T>): Promise<T> {
  const maxBytes = options.maxBytes ?? FETCH_MAX_BYTES
  return guardedRequest(text, options, async (response, body) => {
    let cut = false
    async function* bounded(): AsyncGenerator<Buffer> {
      let size = 0
      for await (const chunk of body) {
        const room = maxBytes - size
        if (chunk.length >= room) {
          if (chunk.length > room) cut = true
          if (room > 0) yield chunk.subarray(0, room)
          // Past the bound: the answer may be a good deal longer (or endless); what is left is never read.
          if (cut) return
          size = maxBytes
          continue
        }
        size += chunk.length
        yield chunk
      }
    }
    return reader({ contentType: contentTypeOf(response.headers), url: response.url, body: bounded(), truncated: () => cut })
  })
}

const contentTypeOf = (headers: Record<string, string | string[] | undefined>) => {
  const type = headers['content-type']
  return typeof type === 'string' ? type : null
}

type Answer = { headers: Record<string, string | string[] | undefined>; url: string }

/** The guard itself: address checks on every hop, pinned connections, the time limit; `consume` reads the final 2xx answer's body. */
async function guardedRequest<T>(text: string, options: GuardedFetchOptions, consume: (response: Answer, body: AsyncIterable<Buffer>) => Promise<T>): Promise<T> {
  const field = options.field ?? 'url'
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  const agents: Agent[] = []
  try {
    // Loaded on the first fetch: a server or command that never fetches a URL does not pay for undici.
    const { Agent, request } = await import('undici')
    let url = parseUrl(text, field)
    for (let hop = 0; ; hop++) {
      const address = await checkedAddress(url, field, options, deadline.signal)
      const agent = pinnedAgent(Agent, address, timeoutMs)
      agents.push(agent)
      const response = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal: deadline.signal,
        headers: { 'user-agent': 'Plaza (+fetch guard)', accept: options.accept ?? 'image/*, */*;q=0.5' },
      })
      const location = response.headers.location
      if (response.statusCode >= 300 && response.statusCode < 400 && location) {
        discard(response.body)
        if (hop >= FETCH_MAX_REDIRECTS) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: more than ${FETCH_MAX_REDIRECTS} redirects` })
        let next: URL
        try {
          next = new URL(String(location), url)
        } catch {
          throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the server redirected to an invalid URL` })
        }
        url = parseUrl(next.href, field)
        continue
      }
      if (response.statusCode < 200 || response.statusCode >= 300) {
        discard(response.body)
        throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the server answered HTTP ${response.statusCode}` })
      }
      try {
        return await consume({ headers: response.headers, url: url.href }, response.body)
      } finally {
        // Whatever the reader left unread is dropped (a no-op once the body was read to its end).
        discard(response.body)
      }
    }
  } catch (error) {
    if (deadline.signal.aborted) {
      throw new TRPCError({ code: 'GATEWAY_TIMEOUT', message: `${field}: the server did not send the file within ${timeoutMs / 1000} s` })
    }
    if (error instanceof TRPCError) throw error
    const code = (error as { code?: string }).code
    throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the file could not be fetched (${code ?? (error as Error).message})` })
  } finally {
    clearTimeout(timer)
    for (const agent of agents) agent.destroy().catch(() => {})
  }
}

/**
 * Checks a URL that a provider, not Plaza, will fetch (an image for Lens, audio for AudD) by the
 * same rules: http(s), no credentials, every address of the host public. Plaza cannot follow the
 * provider's redirects; the check keeps Plaza from being the one who names a private address.
 */
export async function checkPublicUrl(text: string, options: Pick<GuardedFetchOptions, 'field' | 'allowPrivate' | 'resolve' | 'timeoutMs'> = {}): Promise<URL> {
  const field = options.field ?? 'url'
  const url = parseUrl(text, field)
  // A timer that holds the process open (AbortSignal.timeout's does not): a command waiting on DNS must not just exit.
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs ?? FETCH_TIMEOUT_MS)
  try {
    await checkedAddress(url, field, options, deadline.signal)
  } catch (error) {
    if (deadline.signal.aborted && !(error instanceof TRPCError)) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the host ${url.hostname} could not be resolved in time` })
    throw error
  } finally {
    clearTimeout(timer)
  }
  return url
}

/** An answer to `guardedPost`, whatever its status. */
export interface GuardedPostAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The start of the body (at most `maxBytes`), for the log; the rest is never read. */
  body: string
}

/**
 * POSTs `body` to a URL a user gave (a Web Push subscription's endpoint) within the guard's rules:
 * every address of the host public (unless `allowPrivate`), the connection pinned to the checked
 * address, the whole exchange within the time limit. Redirects are not followed (a 3xx is the
 * answer), and any status is answered, not thrown: what it means is the caller's protocol. The
 * answer's body is read up to `maxBytes` (default 4 KiB). Refusals as `guardedFetch`: 400 for the
 * address, 422 when the host cannot be reached, 504 past the time limit.
 */
export async function guardedPost(
  text: string,
  options: Omit<GuardedFetchOptions, 'accept'> & { headers: Record<string, string>; body: Buffer },
): Promise<GuardedPostAnswer> {
  const field = options.field ?? 'url'
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const maxBytes = options.maxBytes ?? 4096
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  let agent: Agent | null = null
  try {
    const { Agent, request } = await import('undici')
    const url = parseUrl(text, field)
    const address = await checkedAddress(url, field, options, deadline.signal)
    agent = pinnedAgent(Agent, address, timeoutMs)
    const response = await request(url, { method: 'POST', dispatcher: agent, signal: deadline.signal, headers: options.headers, body: options.body })
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const chunk of response.body) {
        chunks.push(chunk.subarray(0, maxBytes - size))
        size += chunk.length
        if (size >= maxBytes) break
      }
    } finally {
      discard(response.body)
    }
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }
  } catch (error) {
    if (deadline.signal.aborted) throw new TRPCError({ code: 'GATEWAY_TIMEOUT', message: `${field}: no answer within ${timeoutMs / 1000} s` })
    if (error instanceof TRPCError) throw error
    const code = (error as { code?: string }).code
    throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: could not be reached (${code ?? (error as Error).message})` })
  } finally {
    clearTimeout(timer)
    agent?.destroy().catch(() => {})
  }
}
