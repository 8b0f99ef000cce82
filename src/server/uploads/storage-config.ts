/**
 * Where files are stored (`PLAZA_STORAGE_URL`, docs/storage.md): the data directory (default), or an
 * S3-compatible bucket (`s3://bucket/prefix` and `PLAZA_S3_*`). Read once at start-up, so a bad URL
 * or a missing credential stops `plaza serve` with one clear line instead of failing the first upload.
 */
import { ConfigError, parseDuration } from '../config.js'

/** How `/uploads/...` answers for an object store: streamed through Plaza, or a redirect to a short-lived signed URL. */
export type StorageServeMode = 'proxy' | 'redirect'

export interface S3StorageConfig {
  kind: 's3'
  bucket: string
  /** Folder inside the bucket, without slashes at either end; '' for the bucket's root. */
  prefix: string
  /** The S3 API's base URL (MinIO, Ceph, R2, ...); undefined for AWS itself, chosen by region. */
  endpoint?: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO, Ceph, most self-hosted stores). */
  forcePathStyle: boolean
  serve: StorageServeMode
  /** How long a redirect's signed URL stays valid (`PLAZA_S3_PRESIGN_TTL`). */
  presignTtlMs: number
}

export type StorageConfig = { kind: 'local' } | S3StorageConfig

export const DEFAULT_PRESIGN_TTL_MS = 5 * 60_000
/** SigV4 refuses signed URLs valid for more than 7 days. */
const MAX_PRESIGN_TTL_MS = 7 * 24 * 3600_000

/** Bucket names as S3 accepts them (3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
/** A prefix of plain folder names: every key under it stays a safe, unescaped path. */
const PREFIX = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/

/** Reads `s3://bucket/prefix` into its bucket and prefix; ConfigError (naming `name`) when it is not one. */
export function parseS3Url(name: string, value: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(value.trim())
  if (!match) throw new ConfigError(`${name} must be an s3://bucket/prefix URL, not "${value}"`)
  const bucket = match[1]
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    throw new ConfigError(`${name}: "${bucket}" is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)`)
  }
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '')
  if (prefix !== '' && (!PREFIX.test(prefix) || prefix.split('/').some((part) => part === '.' || part === '..'))) {
    throw new ConfigError(`${name}: the prefix "${prefix}" may hold only letters, digits, _ . - and / between folder names`)
  }
  return { bucket, prefix }
}

function parseBoolean(name: string, value: string | undefined): boolean {
  const text = value?.trim().toLowerCase() ?? ''
  if (['', '0', 'false', 'no', 'off'].includes(text)) return false
  if (['1', 'true', 'yes', 'on'].includes(text)) return true
  throw new ConfigError(`${name} must be 1 or 0, not "${value}"`)
}

/**
 * The S3 settings for `url` from `PLAZA_S3_*` (used for `PLAZA_STORAGE_URL` and for
 * `plaza admin storage migrate --to`). Secrets are never put in a message.
 */
export function parseS3Config(name: string, url: string, env: NodeJS.ProcessEnv): S3StorageConfig {
  const { bucket, prefix } = parseS3Url(name, url)
  const endpointText = env.PLAZA_S3_ENDPOINT?.trim() || undefined
  let endpoint: string | undefined
  if (endpointText) {
    let parsed: URL | null = null
    try {
      parsed = new URL(endpointText)
    } catch {
      // Reported below.
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.hostname || parsed.username || parsed.password || parsed.search || parsed.hash) {
      throw new ConfigError(`PLAZA_S3_ENDPOINT must be an http(s) URL such as https://s3.example.com or http://127.0.0.1:9000, not "${endpointText}"`)
    }
    endpoint = endpointText.replace(/\/+$/, '')
  }
  const region = env.PLAZA_S3_REGION?.trim() || 'us-east-1'
  if (!/^[a-z0-9-]{2,32}$/.test(region)) throw new ConfigError(`PLAZA_S3_REGION must be a region name such as us-east-1 or auto, not "${region}"`)
  const accessKeyId = env.PLAZA_S3_ACCESS_KEY_ID?.trim() ?? ''
  const secretAccessKey = env.PLAZA_S3_SECRET_ACCESS_KEY?.trim() ?? ''
  const missing = [!accessKeyId && 'PLAZA_S3_ACCESS_KEY_ID', !secretAccessKey && 'PLAZA_S3_SECRET_ACCESS_KEY'].filter(Boolean)
  if (missing.length > 0) throw new ConfigError(`${name} is an S3 bucket, so ${missing.join(' and ')} must be set too`)
  const serveText = env.PLAZA_STORAGE_SERVE?.trim().toLowerCase() || 'proxy'
  if (serveText !== 'proxy' && serveText !== 'redirect') throw new ConfigError(`PLAZA_STORAGE_SERVE must be proxy or redirect, not "${env.PLAZA_STORAGE_SERVE}"`)
  const presignTtlMs = parseDuration('PLAZA_S3_PRESIGN_TTL', env.PLAZA_S3_PRESIGN_TTL, DEFAULT_PRESIGN_TTL_MS, 's')
  if (presignTtlMs < 1000 || presignTtlMs > MAX_PRESIGN_TTL_MS) throw new ConfigError(`PLAZA_S3_PRESIGN_TTL must be from 1 s to 7 days, not "${env.PLAZA_S3_PRESIGN_TTL}"`)
  return {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: parseBoolean('PLAZA_S3_FORCE_PATH_STYLE', env.PLAZA_S3_FORCE_PATH_STYLE),
    serve: serveText,
    presignTtlMs,
  }
}

/** `PLAZA_STORAGE_URL`: unset (or `local`) for the data directory, or `s3://bucket/prefix`. */
export function parseStorageConfig(env: NodeJS.ProcessEnv): StorageConfig {
  const url = env.PLAZA_STORAGE_URL?.trim() ?? ''
  if (url === '' || url === 'local') {
    const serve = env.PLAZA_STORAGE_SERVE?.trim().toLowerCase() ?? ''
    if (serve !== '' && serve !== 'proxy') throw new ConfigError('PLAZA_STORAGE_SERVE=redirect needs an object store (PLAZA_STORAGE_URL=s3://bucket/prefix)')
    return { kind: 'local' }
  }
  if (!url.startsWith('s3://')) throw new ConfigError(`PLAZA_STORAGE_URL must be s3://bucket/prefix (or unset for the data directory), not "${url}"`)
  return parseS3Config('PLAZA_STORAGE_URL', url, env)
}

/** The store a config names, for messages: `s3://bucket/prefix` or `local`. */
export function describeStorage(config: StorageConfig): string {
  return config.kind === 'local' ? 'local' : `s3://${config.bucket}${config.prefix ? `/${config.prefix}` : ''}`
}
