/**
 * Which upstreams serve the catalog's provider-backed operations (docs/providers.md). Read from the
 * same file as the chat providers (`PLAZA_LLM_CONFIG`, its `services:` map: an ordered list of
 * targets per service, the first choice then the fallbacks) and from `PLAZA_<NAME>_*` shortcuts,
 * whose target comes first. As in the chat file, keys never live in the file: it names the
 * environment variable that holds each one.
 */
import path from 'node:path'
import { z } from 'zod'
import { readConfigFile } from '../config-file.js'
import { ConfigError } from '../config.js'
import { hasKey, lookup } from '../../shared/lookup.js'

/** The services this layer knows, by their lower-case name (the registry's `providers` value in lower case), and the protocols each speaks (the first is the default). */
export const SERVICE_PROTOCOLS = {
  images: ['openai-images', 'automatic1111', 'hf-inference'],
  weather: ['open-meteo'],
  removebg: ['removebg', 'rembg'],
  // Speech (docs/speech.md#providers): OpenAI's `/audio/speech` (and the local servers that speak it), ElevenLabs, Amazon Polly, Azure AI Speech.
  speech: ['openai-speech'],
  elevenlabs: ['elevenlabs'],
  polly: ['polly'],
  azure_speech: ['azure-speech'],
  // search-backed operations (docs/search.md)
  search: ['searxng'],
  clips: ['invidious', 'youtube'],
  lens: ['serpapi'],
  audd: ['audd'],
} as const satisfies Record<string, readonly string[]>

export type ServiceName = keyof typeof SERVICE_PROTOCOLS
export type Protocol = (typeof SERVICE_PROTOCOLS)[ServiceName][number]
export const SERVICE_NAMES = Object.keys(SERVICE_PROTOCOLS) as ServiceName[]

/** Public, keyless defaults: a service with one is configured even when nothing is set. */
const PUBLIC_DEFAULTS: Partial<Record<ServiceName, { protocol: Protocol; baseUrl: string; options: Record<string, string> }>> = {
  weather: { protocol: 'open-meteo', baseUrl: 'https://api.open-meteo.com', options: { geocoding_url: 'https://geocoding-api.open-meteo.com' } },
}

/** Where a protocol's base URL points when only a key is given (the providers' own public APIs). */
const KEYED_DEFAULTS: Partial<Record<Protocol, string>> = {
  removebg: 'https://api.remove.bg',
  elevenlabs: 'https://api.elevenlabs.io',
  youtube: 'https://www.googleapis.com/youtube/v3',
  serpapi: 'https://serpapi.com',
  audd: 'https://api.audd.io',
}

/** Where a protocol's base URL points when only a region is given (Amazon Polly's and Azure AI Speech's regional endpoints). */
const REGIONAL_DEFAULTS: Partial<Record<Protocol, (region: string) => string>> = {
  polly: (region) => `https://polly.${region}.amazonaws.com`,
  'azure-speech': (region) => `https://${region}.tts.speech.microsoft.com`,
}

/** Extra, protocol-specific settings a target may carry (`PLAZA_<NAME>_<SETTING>` in the environment). */
const OPTION_NAMES: Partial<Record<ServiceName, string[]>> = { weather: ['geocoding_url'], polly: ['region'], azure_speech: ['region'] }
/** The options that are URLs (the others are plain words such as a region). */
const URL_OPTIONS = new Set(['geocoding_url'])
const REGION = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** The variable holding a service's key, where it is not `PLAZA_<NAME>_API_KEY` (Polly's secret access key). */
const KEY_VARIABLES: Partial<Record<ServiceName, string>> = { polly: 'SECRET_ACCESS_KEY' }

export interface ServiceTarget {
  service: ServiceName
  /** `env` for the `PLAZA_<NAME>_*` target, else `<service>.<index>` of the file's list: named in logs and metrics. */
  name: string
  protocol: Protocol
  /** Without a trailing slash; for openai-images it includes the version (https://api.openai.com/v1). */
  baseUrl: string
  apiKey?: string
  /** Longest wait for the upstream to start answering, and for its body to arrive. */
  timeoutMs: number
  /** The upstream model for every alias `models` does not map. */
  model?: string
  /** Plaza's aliases (image model aliases, `toanime`, `zombie`) to upstream model names. */
  models: Record<string, string>
  /** Extra, non-secret headers. */
  headers: Record<string, string>
  /** Protocol-specific settings (`geocoding_url`, `region`). */
  options: Record<string, string>
  /** Polly's access key id (its `apiKey` is the secret access key); treated as a secret too. */
  accessKeyId?: string
}

export interface RetryPolicy {
  /** Retries of one target after its first try, on 429, 5xx and dropped connections. */
  maxRetries: number
  baseDelayMs: number
  /** Longest wait before a retry; a longer Retry-After moves on to the fallback instead. */
  maxDelayMs: number
}

export interface ProvidersConfig {
  services: Map<ServiceName, ServiceTarget[]>
  retry: RetryPolicy
  /** Every configured key, so that anything leaving Plaza can be scrubbed of them. */
  secrets: string[]
}

export const DEFAULT_TIMEOUT_MS = 120_000
export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 10_000 }

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (the key itself never goes in the file)')

const targetSchema = z.strictObject({
  protocol: z.string().optional(),
  base_url: httpUrl.optional(),
  api_key_env: envName.optional(),
  model: z.string().min(1).optional(),
  models: z.record(z.string().min(1), z.string().min(1)).optional(),
  timeout_ms: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  geocoding_url: httpUrl.optional(),
  region: z.string().regex(REGION, 'must be a region name such as eu-west-1 or westeurope').optional(),
  access_key_id_env: envName.optional(),
})

/** Only the parts of the file this layer reads; the chat configuration validates the rest. */
const fileSchema = z.object({
  services: z.record(z.string(), z.array(targetSchema).min(1, 'list at least one target')).optional(),
  retry: z
    .object({ max_retries: z.number().int().min(0).max(10).optional(), base_delay_ms: z.number().int().min(0).optional(), max_delay_ms: z.number().int().min(0).optional() })
    .optional(),
})

/** The `PLAZA_<NAME>` prefix of a service. */
export const envPrefix = (service: ServiceName) => `PLAZA_${service.toUpperCase()}`

/** What to set for the services whose shortcut is not a base URL. */
const HOW_TO_SET: Partial<Record<ServiceName, string>> = {
  elevenlabs: 'set PLAZA_ELEVENLABS_API_KEY (and PLAZA_ELEVENLABS_BASE_URL for another endpoint than https://api.elevenlabs.io)',
  polly: 'set PLAZA_POLLY_REGION, PLAZA_POLLY_ACCESS_KEY_ID and PLAZA_POLLY_SECRET_ACCESS_KEY (and PLAZA_POLLY_BASE_URL for another endpoint)',
  azure_speech: 'set PLAZA_AZURE_SPEECH_REGION and PLAZA_AZURE_SPEECH_API_KEY, or PLAZA_AZURE_SPEECH_BASE_URL (a speech container)',
}

/** What the 503 of an unconfigured service says to set. */
export function howToConfigure(service: ServiceName): string {
  const how = HOW_TO_SET[service]
  if (how) return `No ${service} provider is configured: ${how}, or list services.${service} in the PLAZA_LLM_CONFIG file (docs/providers.md); a server reads them at start-up.`
  const prefix = envPrefix(service)
  const protocols = SERVICE_PROTOCOLS[service]
  const protocol = protocols.length > 1 ? `, ${prefix}_PROTOCOL=${protocols.join('|')}` : ''
  const keyed = KEYED_DEFAULTS[protocols[0]]
  // A service whose default protocol is a keyed public API (AudD, SerpApi, remove.bg) needs only its key.
  if (keyed) {
    return `No ${service} provider is configured: set ${prefix}_API_KEY (for ${keyed}), or ${prefix}_BASE_URL for another server speaking the protocol${protocol}, or list services.${service} in the PLAZA_LLM_CONFIG file (docs/providers.md); a server reads them at start-up.`
  }
  return `No ${service} provider is configured: set ${prefix}_BASE_URL (and ${prefix}_API_KEY if it needs one${protocol}), or list services.${service} in the PLAZA_LLM_CONFIG file (docs/providers.md); a server reads them at start-up.`
}

function fail(message: string): never {
  throw new ConfigError(`provider configuration: ${message}`)
}

function protocolOf(service: ServiceName, value: string | undefined, where: string): Protocol {
  const protocols = SERVICE_PROTOCOLS[service] as readonly string[]
  const protocol = value?.trim().toLowerCase() || protocols[0]
  if (!protocols.includes(protocol)) fail(`${where} must be one of ${protocols.join(', ')} for ${service}, not "${value}"`)
  return protocol as Protocol
}

function timeoutOf(name: string, raw: string | undefined): number | undefined {
  if (!raw?.trim()) return undefined
  const ms = Number(raw)
  if (!Number.isInteger(ms) || ms <= 0) fail(`${name} must be a whole number of milliseconds, not "${raw}"`)
  return ms
}

const trimUrl = (url: string) => url.replace(/\/+$/, '')

/** Polly signs with its region: the configured one, else the one in an AWS endpoint's host name. */
function signingRegion(target: { baseUrl: string; options: Record<string, string> }, where: string): void {
  if (target.options.region) return
  const fromHost = /^polly\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(new URL(target.baseUrl).hostname)?.[1]
  if (!fromHost) fail(`${where} needs a region to sign requests with (PLAZA_POLLY_REGION or region:)`)
  target.options.region = fromHost
}

/** The `PLAZA_<NAME>_*` target of a service, or null when its variables name none. */
function envTarget(service: ServiceName, env: NodeJS.ProcessEnv): ServiceTarget | null {
  const prefix = envPrefix(service)
  const read = (suffix: string) => env[`${prefix}_${suffix}`]?.trim() || undefined
  const protocol = protocolOf(service, read('PROTOCOL'), `${prefix}_PROTOCOL`)
  const keyVariable = KEY_VARIABLES[service] ?? 'API_KEY'
  const apiKey = read(keyVariable)
  const options: Record<string, string> = {}
  for (const option of OPTION_NAMES[service] ?? []) {
    const value = read(option.toUpperCase()) ?? PUBLIC_DEFAULTS[service]?.options[option]
    if (value === undefined) continue
    if (URL_OPTIONS.has(option) ? !httpUrl.safeParse(value).success : !REGION.test(value)) fail(`${prefix}_${option.toUpperCase()} must be ${URL_OPTIONS.has(option) ? 'an http(s) URL' : 'a region name such as eu-west-1'}, not "${value}"`)
    options[option] = URL_OPTIONS.has(option) ? trimUrl(value) : value
  }
  const regional = options.region ? REGIONAL_DEFAULTS[protocol]?.(options.region) : undefined
  const baseUrl = read('BASE_URL') ?? regional ?? (apiKey ? KEYED_DEFAULTS[protocol] : undefined)
  const accessKeyId = service === 'polly' ? read('ACCESS_KEY_ID') : undefined
  if (!baseUrl) {
    if (apiKey || accessKeyId || read('MODEL') || read('PROTOCOL')) fail(`${prefix}_${keyVariable}, _MODEL and _PROTOCOL need ${prefix}_BASE_URL${REGIONAL_DEFAULTS[protocol] ? ` or ${prefix}_REGION` : ''}`)
    return null
  }
  if (!httpUrl.safeParse(baseUrl).success) fail(`${prefix}_BASE_URL must be an http(s) URL, not "${baseUrl}"`)
  if (service === 'polly') {
    if (!accessKeyId || !apiKey) fail(`Amazon Polly signs every request: set ${prefix}_ACCESS_KEY_ID and ${prefix}_SECRET_ACCESS_KEY`)
    signingRegion({ baseUrl, options }, `${prefix}_BASE_URL`)
  }
  // Azure's regional endpoint always wants its key (a speech container, given by its base URL, does not).
  if (protocol === 'azure-speech' && !read('BASE_URL') && !apiKey) fail(`${prefix}_REGION needs ${prefix}_API_KEY (a speech container is given by ${prefix}_BASE_URL instead)`)
  return {
    service,
    name: 'env',
    protocol,
    baseUrl: trimUrl(baseUrl),
    apiKey,
    timeoutMs: timeoutOf(`${prefix}_TIMEOUT_MS`, read('TIMEOUT_MS')) ?? DEFAULT_TIMEOUT_MS,
    model: read('MODEL'),
    models: {},
    headers: {},
    options,
    ...(accessKeyId ? { accessKeyId } : {}),
  }
}

function readFile(file: string): z.output<typeof fileSchema> {
  return readConfigFile(file, fileSchema, fail)
}

function fileTarget(service: ServiceName, index: number, spec: z.output<typeof targetSchema>, env: NodeJS.ProcessEnv): ServiceTarget {
  const where = `services.${service}.${index}`
  const protocol = protocolOf(service, spec.protocol, `${where}.protocol`)
  let apiKey: string | undefined
  if (spec.api_key_env) {
    apiKey = lookup(env, spec.api_key_env)?.trim()
    if (!apiKey) fail(`${where}.api_key_env names the environment variable ${spec.api_key_env}, which is not set`)
  }
  const options: Record<string, string> = {}
  for (const option of OPTION_NAMES[service] ?? []) {
    const value = (spec as Record<string, string | undefined>)[option] ?? PUBLIC_DEFAULTS[service]?.options[option]
    if (value !== undefined) options[option] = URL_OPTIONS.has(option) ? trimUrl(value) : value
  }
  for (const option of ['geocoding_url', 'region'] as const) if (spec[option] && !(OPTION_NAMES[service] ?? []).includes(option)) fail(`${where}.${option} is not a setting of ${service}`)
  if (spec.access_key_id_env && service !== 'polly') fail(`${where}.access_key_id_env is not a setting of ${service}`)
  const regional = options.region ? REGIONAL_DEFAULTS[protocol]?.(options.region) : undefined
  const baseUrl = spec.base_url ?? PUBLIC_DEFAULTS[service]?.baseUrl ?? regional ?? (apiKey ? KEYED_DEFAULTS[protocol] : undefined)
  if (!baseUrl) fail(`${where}.base_url is required${REGIONAL_DEFAULTS[protocol] ? ' (or region)' : ''}`)
  let accessKeyId: string | undefined
  if (service === 'polly') {
    if (spec.access_key_id_env) accessKeyId = lookup(env, spec.access_key_id_env)?.trim()
    if (!spec.access_key_id_env || !apiKey) fail(`${where}: Amazon Polly signs every request: set access_key_id_env and api_key_env (the secret access key)`)
    if (!accessKeyId) fail(`${where}.access_key_id_env names the environment variable ${spec.access_key_id_env}, which is not set`)
    signingRegion({ baseUrl, options }, where)
  }
  if (protocol === 'azure-speech' && !spec.base_url && !apiKey) fail(`${where}: a region needs api_key_env (a speech container is given by base_url instead)`)
  return {
    service,
    name: `${service}.${index}`,
    protocol,
    baseUrl: trimUrl(baseUrl),
    apiKey,
    timeoutMs: spec.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    model: spec.model,
    models: spec.models ?? {},
    headers: spec.headers ?? {},
    options,
    ...(accessKeyId ? { accessKeyId } : {}),
  }
}

/** Builds the provider configuration from the environment and the `PLAZA_LLM_CONFIG` file; throws ConfigError on mistakes. */
export function loadProvidersConfig(env: NodeJS.ProcessEnv, cwd = process.cwd()): ProvidersConfig {
  const file = env.PLAZA_LLM_CONFIG?.trim()
  const parsed = file ? readFile(path.resolve(cwd, file)) : {}
  for (const name of Object.keys(parsed.services ?? {})) {
    if (!hasKey(SERVICE_PROTOCOLS, name)) fail(`services.${name}: unknown service (known: ${SERVICE_NAMES.join(', ')})`)
  }
  const services = new Map<ServiceName, ServiceTarget[]>()
  for (const service of SERVICE_NAMES) {
    const targets: ServiceTarget[] = []
    const fromEnv = envTarget(service, env)
    if (fromEnv) targets.push(fromEnv)
    ;(parsed.services?.[service] ?? []).forEach((spec, index) => targets.push(fileTarget(service, index, spec, env)))
    const fallback = PUBLIC_DEFAULTS[service]
    if (targets.length === 0 && fallback) {
      targets.push({ service, name: 'default', protocol: fallback.protocol, baseUrl: fallback.baseUrl, timeoutMs: DEFAULT_TIMEOUT_MS, models: {}, headers: {}, options: { ...fallback.options } })
    }
    if (targets.length > 0) services.set(service, targets)
  }
  const retry: RetryPolicy = {
    maxRetries: parsed.retry?.max_retries ?? DEFAULT_RETRY.maxRetries,
    baseDelayMs: parsed.retry?.base_delay_ms ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: parsed.retry?.max_delay_ms ?? DEFAULT_RETRY.maxDelayMs,
  }
  const secrets = [...services.values()].flat().flatMap((target) => [target.apiKey, target.accessKeyId]).filter((key): key is string => !!key)
  return { services, retry, secrets }
}

const cache = new WeakMap<NodeJS.ProcessEnv, ProvidersConfig | ConfigError>()

/**
 * Whether `name` (a registry `providers` value: IMAGES, WEATHER, ...) has a target here. Names this
 * layer does not manage yet are configured by their `PLAZA_<NAME>_BASE_URL`.
 */
export function isProviderConfigured(name: string, env: NodeJS.ProcessEnv): boolean {
  const service = name.toLowerCase()
  // The weather's geocoding API: Open-Meteo's public one unless PLAZA_WEATHER_GEOCODING_URL says otherwise.
  if (name === 'GEOCODING') return true
  if (!hasKey(SERVICE_PROTOCOLS, service)) return Boolean(env[`PLAZA_${name}_BASE_URL`]?.trim())
  let config = cache.get(env)
  if (!config) {
    try {
      config = loadProvidersConfig(env)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      config = error
    }
    cache.set(env, config)
  }
  // An invalid configuration (`plaza serve` refuses to start with one) leaves only the public defaults.
  if (config instanceof ConfigError) return PUBLIC_DEFAULTS[service as ServiceName] !== undefined
  return (config.services.get(service as ServiceName)?.length ?? 0) > 0
}
