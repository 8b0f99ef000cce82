import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { ConfigError, parseDuration } from './config-parse.js'
import { parseDeliveryConfig, type DeliveryConfig } from './delivery/config.js'

export { ConfigError, parseDuration }

export interface RateLimitRule {
  /** Requests allowed per window. */
  max: number
  windowMs: number
}

/** Per-class limits (decisions §3, docs/social.md#rate-limits). */
export interface RateLimits {
  /** Failed authentications (wrong passwords, bad tokens), per client address and per account. */
  auth: RateLimitRule
  upload: RateLimitRule
  /** Every other call: per user with a token, per address without. */
  default: RateLimitRule
  /** Reports (POST /reports) per user: an hour's window, as reporting is rare and abuse of it floods the moderators. */
  report: RateLimitRule
  /**
   * Costly anonymous work (execute, agent, speech, code images, makers, imaging, media) per
   * address, in units: a call costs more the larger its input (heavy-costs.ts).
   */
  heavy: RateLimitRule
  /**
   * Per account (or mailed address), an hour's window: mail sent for it (password resets,
   * verification links) and wrong two-factor codes. Past it, mail is quietly not sent (the answer
   * must not tell whether the account exists) and codes are refused with 429.
   */
  account: RateLimitRule
}

export const DEFAULT_RATE_LIMITS: RateLimits = {
  auth: { max: 5, windowMs: 60_000 },
  upload: { max: 10, windowMs: 60_000 },
  default: { max: 100, windowMs: 60_000 },
  report: { max: 20, windowMs: 3_600_000 },
  heavy: { max: 120, windowMs: 60_000 },
  account: { max: 10, windowMs: 3_600_000 },
}

export interface ServerConfig {
  host: string
  port: number
  dataDir: string
  /** A libsql server to use instead of `<dataDir>/plaza.db`. */
  databaseUrl?: string
  databaseAuthToken?: string
  /**
   * An embedded replica of `databaseUrl`: a local file, synced from the server, that serving
   * processes read from (writes still go to the server); absolute. db/replica.ts.
   */
  databaseReplica?: string
  /** How long a request to the libsql server may take before the API answers 503 (`PLAZA_DATABASE_TIMEOUT`). */
  databaseTimeoutMs: number
  /** Base of absolute URLs handed to clients; otherwise taken from the request's Host. */
  publicUrl?: string
  rateLimits: RateLimits | false
  /** Longest a request may take to arrive (headers and body); a stalled body is cut with 408. */
  requestTimeoutMs: number
  /** Longest the request line and headers may take. */
  headersTimeoutMs: number
  /**
   * `PLAZA_STOP_GRACE`: at a stop, how long heavy work already running (renders, speech, programs)
   * may take to finish; then it is ended and its requests answered 503.
   */
  stopGraceMs: number
  /** Most simultaneous client connections; more are refused at accept. */
  maxConnections: number
  /** Most simultaneous connections from one peer address (`PLAZA_MAX_CONNECTIONS_PER_ADDRESS`); proxies in `trustProxy` are exempt. */
  maxConnectionsPerAddress: number
  /** How long an idle keep-alive connection is kept open between requests (`PLAZA_KEEPALIVE_TIMEOUT_MS`). */
  keepAliveTimeoutMs: number
  /** Which proxies may name the client in `X-Forwarded-For` / `Forwarded` (none by default). */
  trustProxy: TrustProxy
  /** Origins allowed by CORS: `*`, a list, or none (CORS off). */
  corsOrigins: '*' | string[] | null
  /** Least severe log level written. */
  logLevel: LogLevel
  /** Generated files (code images, catalog outputs stored for JSON answers) expire after this long. */
  generatedTtlMs: number
  /** Accounts with more followers than this are not fanned out on write but pulled into feeds at read time. */
  fanoutMaxFollowers: number
  /** How long a search's answer (post ids, hashtags) is reused for the same words (`PLAZA_SEARCH_CACHE_TTL`, seconds or `500ms`; 0: never). */
  searchCacheTtlMs: number
  /** Generated files together are kept under this many bytes; the oldest are evicted first. */
  generatedMaxBytes: number
  /** Live notification streams (GET /notifications/stream): caps and timings. */
  streams: StreamConfig
  /** Where `GET /api/website` redirects (`PLAZA_WEBSITE_URL`): an http(s) URL or an absolute path on this server. */
  websiteUrl: string
  /** Metrics and call statistics (`PLAZA_METRICS`, `PLAZA_METRICS_TOKEN`; docs/metrics.md). */
  metrics: MetricsConfig
  /**
   * `PLAZA_CODEIMAGE_WARM` (on by default): `plaza serve` starts the code-image render workers at
   * start-up, so the first render does not pay for fonts and grammars; off, they start at the first
   * render (lighter for a server that seldom draws, and for short-lived test servers).
   */
  codeimageWarm: boolean
  /** Whether the chat gateway requires a key before any exists (`PLAZA_GATEWAY_AUTH`; docs/chat.md#keys). */
  gatewayAuth: GatewayAuth
  /**
   * `PLAZA_FETCH_ALLOW_PRIVATE=1`: the fetch guard (fetch-guard.ts) may reach loopback and private
   * networks. For tests that serve images from loopback; never on a server open to users.
   */
  fetchAllowPrivate: boolean
  /** `PLAZA_MEDIA_TIMEOUT`: the longest `GET /api/media` spends fetching a page and its oEmbed answer (docs/media.md). */
  mediaTimeoutMs: number
  /** `PLAZA_AGENT_TIMEOUT_MS`: the longest one `POST /api/agent` run may take (docs/agent.md). */
  agentTimeoutMs: number
  /** `PLAZA_PASSWORD_COST`: log2 of scrypt's N for new password hashes (docs/accounts.md). */
  passwordCost: number
  /** Web Push, mail and the sender loops (`PLAZA_VAPID_*`, `PLAZA_SMTP_URL`, `PLAZA_MAIL_*`...; delivery/config.ts). */
  delivery: DeliveryConfig
  /** The environment the configuration was read from; feature modules (chat providers) read their own variables from it. */
  env: NodeJS.ProcessEnv
}

/** Live notification streams: how many may be open, and how often they are fed, checked and kept alive. */
export interface StreamConfig {
  /** Open streams per user in this process (`PLAZA_STREAMS_PER_USER`); more are refused with 429. */
  perUser: number
  /** Open streams in this process (`PLAZA_STREAMS_MAX`); more are refused with 429. */
  total: number
  /** An SSE comment this often keeps proxies and NATs from closing an idle stream (`PLAZA_STREAM_HEARTBEAT`). */
  heartbeatMs: number
  /** How often the process's one poller looks for new notifications while streams are open (`PLAZA_STREAM_POLL`). */
  pollMs: number
  /** How often unread counts are re-checked, for reads marked by any process (`PLAZA_STREAM_UNREAD_CHECK`). */
  unreadCheckMs: number
  /** A client whose socket buffer stays full this long is disconnected (`PLAZA_STREAM_STALL`). */
  stallMs: number
  /** The `retry:` hint: how long a client waits before reconnecting (`PLAZA_STREAM_RETRY`). */
  retryMs: number
}

/** Whether metrics and call statistics are recorded, and the bearer token their endpoints require. */
export interface MetricsConfig {
  /** False with `PLAZA_METRICS=off`: nothing is recorded and the metrics endpoints answer 503. */
  enabled: boolean
  /** `PLAZA_METRICS_TOKEN`: when set, /metrics, /api/metrics and /api/stats require it as a bearer token. */
  token: string | null
}
/** `required`: the chat gateway needs a key even before one exists. `auto` (`off` or unset): once any key exists. */
export type GatewayAuth = 'auto' | 'required'

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: './.plaza',
  requestTimeoutMs: 60_000,
  headersTimeoutMs: 20_000,
  stopGraceMs: 5_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 256,
  keepAliveTimeoutMs: 5_000,
  generatedTtlMs: 24 * 3600_000,
  generatedMaxBytes: 1024 * 1024 * 1024,
  fanoutMaxFollowers: 10_000,
  searchCacheTtlMs: 5000,
  websiteUrl: '/docs',
  mediaTimeoutMs: 8000,
  streams: { perUser: 5, total: 1000, heartbeatMs: 15_000, pollMs: 250, unreadCheckMs: 1000, stallMs: 30_000, retryMs: 3000 },
} as const

export type LogLevel = 'error' | 'warn' | 'info' | 'debug'
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug']

/**
 * `PLAZA_TRUST_PROXY`: a number of proxy hops in front of Plaza (the client is that many
 * addresses from the right of `X-Forwarded-For`), or a list of proxy addresses/CIDR ranges whose
 * word is taken; `none` (default) means the socket's address is the client.
 */
export type TrustProxy = { kind: 'none' } | { kind: 'hops'; hops: number } | { kind: 'list'; entries: string[] }

/**
 * Reads `PLAZA_RATE_LIMITS`: `off`, or overrides such as `auth=10,upload=20,default=300,heavy=240`
 * (requests, failures for `auth` and units for `heavy`, per window of the class: a minute, an hour
 * for `report` and `account`).
 */
export function parseRateLimits(value: string | undefined): RateLimits | false {
  if (value === undefined || value.trim() === '') return DEFAULT_RATE_LIMITS
  if (/^(off|false|0|no)$/i.test(value.trim())) return false
  const limits: RateLimits = structuredClone(DEFAULT_RATE_LIMITS)
  for (const part of value.split(',')) {
    const match = /^\s*(auth|upload|default|report|heavy|account)\s*=\s*(\d+)\s*$/.exec(part)
    if (!match) throw new ConfigError(`PLAZA_RATE_LIMITS: cannot read "${part}" (use off, or e.g. auth=5,upload=10,default=100,report=20,heavy=120,account=10)`)
    limits[match[1] as keyof RateLimits].max = Number(match[2])
  }
  return limits
}

export function parsePort(value: string | number): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`port must be a whole number from 0 to 65535, not "${value}"`)
  return port
}

/** Reads a size in bytes: a number, or with a unit (`512k`, `100M`, `2G`). */
export function parseBytes(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg])?i?b?\s*$/i.exec(value)
  if (!match) throw new ConfigError(`${name}: cannot read "${value}" (use bytes, or e.g. 512M, 2G)`)
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(match[2] ?? '').toLowerCase() as '']
  return Math.round(Number(match[1]) * unit)
}

/** Reads a whole number of at least 1 from a variable (`name` is named in the error). */
export function parsePositiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a whole number of at least 1, not "${value}"`)
  return n
}

export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = value?.trim() ?? ''
  if (text === '' || /^(none|off|false|no|0)$/i.test(text)) return { kind: 'none' }
  if (/^\d+$/.test(text)) return { kind: 'hops', hops: Number(text) }
  if (/^(true|yes|on)$/i.test(text)) {
    throw new ConfigError('PLAZA_TRUST_PROXY: say how many proxies are in front (e.g. 1) or list their addresses; "true" would let any client choose its own address')
  }
  const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean)
  for (const entry of entries) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)) throw new ConfigError(`PLAZA_TRUST_PROXY: "${entry}" is not an IP address or CIDR range`)
  }
  return { kind: 'list', entries }
}

export function parseCorsOrigins(value: string | undefined): '*' | string[] | null {
  const text = value?.trim() ?? ''
  if (text === '') return null
  if (text === '*') return '*'
  const origins = text.split(',').map((origin) => origin.trim().replace(/\/+$/, '')).filter(Boolean)
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new ConfigError(`PLAZA_CORS_ORIGINS: "${origin}" is not an origin such as https://app.example.com (or use *)`)
  }
  return origins
}

/**
 * Reads `PLAZA_WEBSITE_URL`: an http(s) URL, or an absolute path on this server (default `/docs`).
 * A `//host` path would leave the server as a scheme-relative URL, so it is refused with the rest.
 */
export function parseWebsiteUrl(value: string | undefined): string {
  const text = value?.trim() ?? ''
  if (text === '') return DEFAULTS.websiteUrl
  const invalid = () => new ConfigError(`PLAZA_WEBSITE_URL must be an http(s) URL or an absolute path such as /docs, not "${value}"`)
  // Only printable ASCII, and none of the characters that would have to be escaped in a Location header.
  if (/[^\x21-\x7e]|["\\<>]/.test(text)) throw invalid()
  if (text.startsWith('/')) {
    if (text.startsWith('//')) throw invalid()
    return text
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw invalid()
  }
  if (!/^https?:$/.test(url.protocol) || !url.hostname) throw invalid()
  return text
}

/** `PLAZA_GATEWAY_AUTH`: `required`, or `off`/unset (a key is required once any exists; a key that exists is never ignored). */
function parseGatewayAuth(value: string | undefined): GatewayAuth {
  const text = value?.trim().toLowerCase() ?? ''
  if (text === 'required') return 'required'
  if (text === '' || text === 'off' || text === 'auto') return 'auto'
  throw new ConfigError(`PLAZA_GATEWAY_AUTH must be required or off, not "${value}"`)
}

export function parseLogLevel(value: string | undefined): LogLevel {
  const text = value?.trim().toLowerCase() || 'info'
  if (!LOG_LEVELS.includes(text as LogLevel)) throw new ConfigError(`PLAZA_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${value}"`)
  return text as LogLevel
}

/** `PLAZA_FETCH_ALLOW_PRIVATE`: `1`/`true` or `0`/`false`; anything else stops the start-up rather than guessing. */
export function parseFetchAllowPrivate(value: string | undefined): boolean {
  const text = value?.trim().toLowerCase() ?? ''
  if (text === '' || text === '0' || text === 'false') return false
  if (text === '1' || text === 'true') return true
  throw new ConfigError(`PLAZA_FETCH_ALLOW_PRIVATE must be 1 or 0, not "${value}"`)
}

/**
 * `PLAZA_PASSWORD_COST`: log2 of scrypt's N for new password hashes, 10 to 20, default 15 (OWASP's
 * N=2^15, r=8, p=3). Below 15 only for tests and development: each step down halves what a guess costs.
 */
export function parsePasswordCost(value: string | undefined): number {
  const text = value?.trim() ?? ''
  if (text === '') return 15
  const cost = Number(text)
  if (!Number.isInteger(cost) || cost < 10 || cost > 20) throw new ConfigError(`PLAZA_PASSWORD_COST must be a whole number from 10 to 20, not "${value}"`)
  return cost
}

/** `PLAZA_MEDIA_TIMEOUT`: milliseconds (or `8s`), from 100 ms to the fetch guard's own 10 s limit. */
export function parseMediaTimeout(value: string | undefined): number {
  const ms = parseDuration('PLAZA_MEDIA_TIMEOUT', value, DEFAULTS.mediaTimeoutMs)
  if (ms < 100 || ms > 10_000) throw new ConfigError(`PLAZA_MEDIA_TIMEOUT must be from 100 ms to 10 s, not "${value}"`)
  return ms
}

/** `PLAZA_AGENT_TIMEOUT_MS`: a coding-agent run's wall time, 120 s unless set (the server checks it at start-up). */
export function parseAgentTimeout(value: string | undefined): number {
  return parsePositiveInt('PLAZA_AGENT_TIMEOUT_MS', value, 120_000)
}

/** `PLAZA_KEEPALIVE_TIMEOUT_MS`: more than 0 (node would keep an idle connection for ever) and at most 10 minutes. */
export function parseKeepAliveTimeout(value: string | undefined): number {
  const ms = parseDuration('PLAZA_KEEPALIVE_TIMEOUT_MS', value, DEFAULTS.keepAliveTimeoutMs)
  if (ms <= 0 || ms > 600_000) throw new ConfigError(`PLAZA_KEEPALIVE_TIMEOUT_MS must be more than 0 and at most 10 minutes, not "${value}"`)
  return ms
}

export interface ConfigOverrides {
  host?: string
  port?: number | string
  dataDir?: string
  rateLimits?: RateLimits | false
}

/**
 * `PLAZA_DATABASE_REPLICA`: the file of an embedded replica of PLAZA_DATABASE_URL. It needs that
 * server, over HTTP (libsql's sync speaks HTTP, not WebSockets), and a path of its own: not a
 * directory, not the data directory's plaza.db, in a directory that exists.
 */
export function parseDatabaseReplica(value: string | undefined, databaseUrl: string | undefined, dataDir: string): string | undefined {
  const raw = value?.trim()
  if (!raw) return undefined
  if (!databaseUrl) throw new ConfigError('PLAZA_DATABASE_REPLICA needs PLAZA_DATABASE_URL: the libsql server the replica is synced from')
  if (/^wss?:\/\//.test(databaseUrl)) throw new ConfigError('PLAZA_DATABASE_REPLICA syncs over HTTP: give PLAZA_DATABASE_URL as libsql://, https:// or http://, not ws(s)://')
  const file = path.resolve(raw)
  if (file === path.join(dataDir, 'plaza.db')) throw new ConfigError("PLAZA_DATABASE_REPLICA must not be the data directory's plaza.db")
  let stats: ReturnType<typeof statSync> | undefined
  try {
    stats = statSync(path.dirname(file))
  } catch {
    stats = undefined
  }
  if (!stats?.isDirectory()) throw new ConfigError(`PLAZA_DATABASE_REPLICA: the directory ${path.dirname(file)} does not exist`)
  if (existsSync(file) && statSync(file).isDirectory()) throw new ConfigError(`PLAZA_DATABASE_REPLICA: ${file} is a directory; name the replica's file`)
  return file
}

/** Flags first, then `PLAZA_*` variables, then defaults (decisions §1). Validated once, at start-up. */
export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const publicUrl = env.PLAZA_PUBLIC_URL?.trim() || undefined
  if (publicUrl && !/^https?:\/\/[^/]+/.test(publicUrl)) throw new ConfigError('PLAZA_PUBLIC_URL must be an http(s) URL')
  const databaseUrl = env.PLAZA_DATABASE_URL?.trim() || undefined
  if (databaseUrl && !/^(libsql|https?|wss?):\/\//.test(databaseUrl)) {
    throw new ConfigError('PLAZA_DATABASE_URL must be a libsql server URL (libsql://, http(s)://, ws(s)://)')
  }
  const dataDir = path.resolve(overrides.dataDir ?? env.PLAZA_DATA_DIR ?? DEFAULTS.dataDir)
  return {
    host: overrides.host ?? env.PLAZA_HOST ?? DEFAULTS.host,
    port: parsePort(overrides.port ?? env.PLAZA_PORT ?? DEFAULTS.port),
    dataDir,
    databaseUrl,
    databaseAuthToken: env.PLAZA_DATABASE_AUTH_TOKEN || undefined,
    databaseReplica: parseDatabaseReplica(env.PLAZA_DATABASE_REPLICA, databaseUrl, dataDir),
    databaseTimeoutMs: parseDuration('PLAZA_DATABASE_TIMEOUT', env.PLAZA_DATABASE_TIMEOUT, 10_000),
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    rateLimits: overrides.rateLimits ?? parseRateLimits(env.PLAZA_RATE_LIMITS),
    requestTimeoutMs: parseDuration('PLAZA_REQUEST_TIMEOUT_MS', env.PLAZA_REQUEST_TIMEOUT_MS, DEFAULTS.requestTimeoutMs),
    headersTimeoutMs: parseDuration('PLAZA_HEADERS_TIMEOUT_MS', env.PLAZA_HEADERS_TIMEOUT_MS, DEFAULTS.headersTimeoutMs),
    stopGraceMs: parseDuration('PLAZA_STOP_GRACE', env.PLAZA_STOP_GRACE, DEFAULTS.stopGraceMs, 's'),
    maxConnections: parsePositiveInt('PLAZA_MAX_CONNECTIONS', env.PLAZA_MAX_CONNECTIONS, DEFAULTS.maxConnections),
    maxConnectionsPerAddress: parsePositiveInt('PLAZA_MAX_CONNECTIONS_PER_ADDRESS', env.PLAZA_MAX_CONNECTIONS_PER_ADDRESS, DEFAULTS.maxConnectionsPerAddress),
    keepAliveTimeoutMs: parseKeepAliveTimeout(env.PLAZA_KEEPALIVE_TIMEOUT_MS),
    trustProxy: parseTrustProxy(env.PLAZA_TRUST_PROXY),
    corsOrigins: parseCorsOrigins(env.PLAZA_CORS_ORIGINS),
    logLevel: parseLogLevel(env.PLAZA_LOG_LEVEL),
    generatedTtlMs: parseDuration('PLAZA_GENERATED_TTL', env.PLAZA_GENERATED_TTL, DEFAULTS.generatedTtlMs, 's'),
    fanoutMaxFollowers: parsePositiveInt('PLAZA_FANOUT_MAX_FOLLOWERS', env.PLAZA_FANOUT_MAX_FOLLOWERS, DEFAULTS.fanoutMaxFollowers),
    searchCacheTtlMs: parseDuration('PLAZA_SEARCH_CACHE_TTL', env.PLAZA_SEARCH_CACHE_TTL, DEFAULTS.searchCacheTtlMs, 's'),
    generatedMaxBytes: parseBytes('PLAZA_GENERATED_MAX_BYTES', env.PLAZA_GENERATED_MAX_BYTES, DEFAULTS.generatedMaxBytes),
    streams: parseStreamConfig(env),
    websiteUrl: parseWebsiteUrl(env.PLAZA_WEBSITE_URL),
    metrics: parseMetricsConfig(env),
    codeimageWarm: parseSwitch('PLAZA_CODEIMAGE_WARM', env.PLAZA_CODEIMAGE_WARM, true),
    gatewayAuth: parseGatewayAuth(env.PLAZA_GATEWAY_AUTH),
    fetchAllowPrivate: parseFetchAllowPrivate(env.PLAZA_FETCH_ALLOW_PRIVATE),
    mediaTimeoutMs: parseMediaTimeout(env.PLAZA_MEDIA_TIMEOUT),
    agentTimeoutMs: parseAgentTimeout(env.PLAZA_AGENT_TIMEOUT_MS),
    passwordCost: parsePasswordCost(env.PLAZA_PASSWORD_COST),
    delivery: parseDeliveryConfig(env, publicUrl?.replace(/\/+$/, '')),
    env,
  }
}

/** `PLAZA_STREAM*`: the live notification streams' caps and timings (durations as `parseDuration` reads them). */
function parseStreamConfig(env: NodeJS.ProcessEnv): StreamConfig {
  const d = DEFAULTS.streams
  const positive = (name: string, value: number) => {
    if (value <= 0) throw new ConfigError(`${name} must be more than 0`)
    return value
  }
  return {
    perUser: parsePositiveInt('PLAZA_STREAMS_PER_USER', env.PLAZA_STREAMS_PER_USER, d.perUser),
    total: parsePositiveInt('PLAZA_STREAMS_MAX', env.PLAZA_STREAMS_MAX, d.total),
    heartbeatMs: positive('PLAZA_STREAM_HEARTBEAT', parseDuration('PLAZA_STREAM_HEARTBEAT', env.PLAZA_STREAM_HEARTBEAT, d.heartbeatMs)),
    pollMs: positive('PLAZA_STREAM_POLL', parseDuration('PLAZA_STREAM_POLL', env.PLAZA_STREAM_POLL, d.pollMs)),
    unreadCheckMs: positive('PLAZA_STREAM_UNREAD_CHECK', parseDuration('PLAZA_STREAM_UNREAD_CHECK', env.PLAZA_STREAM_UNREAD_CHECK, d.unreadCheckMs)),
    stallMs: positive('PLAZA_STREAM_STALL', parseDuration('PLAZA_STREAM_STALL', env.PLAZA_STREAM_STALL, d.stallMs)),
    retryMs: positive('PLAZA_STREAM_RETRY', parseDuration('PLAZA_STREAM_RETRY', env.PLAZA_STREAM_RETRY, d.retryMs)),
  }
}

/** Shortest `PLAZA_METRICS_TOKEN` accepted: a guessable token would publish the figures to anyone. */
const MIN_METRICS_TOKEN = 16

/** An on/off setting: on, off (or true/false, 1/0, yes/no, any case); unset or empty is `fallback`. */
export function parseSwitch(name: string, value: string | undefined, fallback: boolean): boolean {
  const word = value?.trim().toLowerCase() ?? ''
  if (word === '') return fallback
  if (['on', 'true', '1', 'yes'].includes(word)) return true
  if (['off', 'false', '0', 'no'].includes(word)) return false
  throw new ConfigError(`${name} must be on or off, not "${value}"`)
}

/** `PLAZA_METRICS` (`on` by default, `off`) and `PLAZA_METRICS_TOKEN` (visible ASCII, at least 16 characters). */
export function parseMetricsConfig(env: NodeJS.ProcessEnv): MetricsConfig {
  const enabled = parseSwitch('PLAZA_METRICS', env.PLAZA_METRICS, true)
  const token = env.PLAZA_METRICS_TOKEN
  // The token itself is never put in a message: a start-up error may end up in a log.
  if (token !== undefined && token !== '' && !(token.length >= MIN_METRICS_TOKEN && /^[\x21-\x7e]+$/.test(token))) {
    throw new ConfigError(`PLAZA_METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN} visible ASCII characters with no spaces`)
  }
  return { enabled, token: token || null }
}
