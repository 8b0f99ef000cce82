import path from 'node:path'

export interface RateLimitRule {
  /** Requests allowed per window. */
  max: number
  windowMs: number
}

/** Per-class limits (decisions §3): auth per client address, uploads and everything else per user. */
export interface RateLimits {
  auth: RateLimitRule
  upload: RateLimitRule
  default: RateLimitRule
}

export const DEFAULT_RATE_LIMITS: RateLimits = {
  auth: { max: 5, windowMs: 60_000 },
  upload: { max: 10, windowMs: 60_000 },
  default: { max: 100, windowMs: 60_000 },
}

export interface ServerConfig {
  host: string
  port: number
  dataDir: string
  /** A libsql server to use instead of `<dataDir>/plaza.db`. */
  databaseUrl?: string
  databaseAuthToken?: string
  /** Base of absolute URLs handed to clients; otherwise taken from the request's Host. */
  publicUrl?: string
  rateLimits: RateLimits | false
  /** The environment the configuration was read from; feature modules (chat providers) read their own variables from it. */
  env: NodeJS.ProcessEnv
}

export const DEFAULTS = { host: '127.0.0.1', port: 8080, dataDir: './.plaza' } as const

export class ConfigError extends Error {}

/**
 * Reads `PLAZA_RATE_LIMITS`: `off`, or overrides such as `auth=10,upload=20,default=300` (per minute).
 */
export function parseRateLimits(value: string | undefined): RateLimits | false {
  if (value === undefined || value.trim() === '') return DEFAULT_RATE_LIMITS
  if (/^(off|false|0|no)$/i.test(value.trim())) return false
  const limits: RateLimits = structuredClone(DEFAULT_RATE_LIMITS)
  for (const part of value.split(',')) {
    const match = /^\s*(auth|upload|default)\s*=\s*(\d+)\s*$/.exec(part)
    if (!match) throw new ConfigError(`PLAZA_RATE_LIMITS: cannot read "${part}" (use off, or e.g. auth=5,upload=10,default=100)`)
    limits[match[1] as keyof RateLimits].max = Number(match[2])
  }
  return limits
}

export function parsePort(value: string | number): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`port must be a whole number from 0 to 65535, not "${value}"`)
  return port
}

export interface ConfigOverrides {
  host?: string
  port?: number | string
  dataDir?: string
  rateLimits?: RateLimits | false
}

/** Flags first, then `PLAZA_*` variables, then defaults (decisions §1). Validated once, at start-up. */
export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const publicUrl = env.PLAZA_PUBLIC_URL?.trim() || undefined
  if (publicUrl && !/^https?:\/\/[^/]+/.test(publicUrl)) throw new ConfigError('PLAZA_PUBLIC_URL must be an http(s) URL')
  const databaseUrl = env.PLAZA_DATABASE_URL?.trim() || undefined
  if (databaseUrl && !/^(libsql|https?|wss?):\/\//.test(databaseUrl)) {
    throw new ConfigError('PLAZA_DATABASE_URL must be a libsql server URL (libsql://, http://, https://)')
  }
  return {
    host: overrides.host ?? env.PLAZA_HOST ?? DEFAULTS.host,
    port: parsePort(overrides.port ?? env.PLAZA_PORT ?? DEFAULTS.port),
    dataDir: path.resolve(overrides.dataDir ?? env.PLAZA_DATA_DIR ?? DEFAULTS.dataDir),
    databaseUrl,
    databaseAuthToken: env.PLAZA_DATABASE_AUTH_TOKEN || undefined,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    rateLimits: overrides.rateLimits ?? parseRateLimits(env.PLAZA_RATE_LIMITS),
    env,
  }
}
