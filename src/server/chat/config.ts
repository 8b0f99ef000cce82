/**
 * Which provider and upstream model serve each chat alias. Read once at start-up from
 * `PLAZA_LLM_*` variables and an optional JSON or YAML file (`PLAZA_LLM_CONFIG`), and validated
 * then, so a typo fails `plaza serve` with a clear message instead of failing a request later.
 * The file names the environment variable that holds each key; keys never live in the file.
 */
import path from 'node:path'
import { z } from 'zod'
import { CHAT_MODEL_ALIASES, CHAT_OPERATIONS, GATEWAY_ALIASES } from '../../shared/schemas/chat.js'
import { readConfigFile } from '../config-file.js'
import { ConfigError } from '../config.js'
import { defaultUpstreamModel } from './names.js'
import { createPriceTable, type Price, type PriceTable } from './prices.js'
import { lookup } from '../../shared/lookup.js'

export type ProviderType = 'openai' | 'anthropic'
/** `o1`: OpenAI's reasoning family, which takes `max_completion_tokens` and no system role or sampling knobs. */
export type ModelFamily = 'chat' | 'o1'

export interface ProviderConfig {
  name: string
  type: ProviderType
  /** For OpenAI-compatible providers the base includes the version, e.g. https://api.openai.com/v1. */
  baseUrl: string
  apiKey?: string
  /** Longest wait for the upstream to start answering, and longest silence between streamed chunks. */
  timeoutMs: number
  /** Whether `top_k` and `repetition_penalty` are forwarded (vLLM, llama.cpp, Ollama take them; OpenAI rejects them). */
  extendedSampling: boolean
  /** Extra, non-secret headers (e.g. OpenRouter's HTTP-Referer). */
  headers: Record<string, string>
  anthropicVersion: string
  /** Whether it serves OpenAI's Responses API (`POST /responses`), so `/v1/responses` is passed through rather than translated to chat completions. */
  responsesApi: boolean
}

export interface Target {
  provider: ProviderConfig
  model: string
  family: ModelFamily
  /** Sent when the request gives none and the provider requires one (Anthropic). */
  defaultMaxTokens: number
  /** Longest wait for this model to start answering, and longest silence between streamed chunks. */
  timeoutMs: number
  /** Request fields this model gets unless the request sets them (e.g. temperature, top_k). */
  params: Record<string, unknown>
  /** Whether the model's text starts inside its reasoning, closed by `</think>` only (R1 distills). */
  startsInReasoning: boolean
  /**
   * Made for one request's name (a name passed through, a `provider/model` prefix, a `*` default):
   * not tracked for cooldown, as any client can make up such names.
   */
  dynamic?: boolean
}

export interface RetryPolicy {
  /** Retries of one target after its first try, on 429, 5xx and dropped connections. */
  maxRetries: number
  baseDelayMs: number
  /** Longest wait before a retry; a longer Retry-After moves on to the fallback instead. */
  maxDelayMs: number
}

/** When a failing deployment is skipped (chat/health.ts): LiteLLM's allowed_fails and cooldown_time. */
export interface RouterPolicy {
  /** Failures within `failWindowMs` that put a deployment into cooldown. */
  allowedFails: number
  failWindowMs: number
  /** How long it is skipped for; 0 never skips one. */
  cooldownMs: number
}

export interface ChatConfig {
  /** Ordered targets (first choice, then fallbacks) by alias or operation name. */
  routes: Map<string, Target[]>
  /** Serves every name `routes` does not list, when set; a target whose model is `*` takes the name as asked. */
  defaultRoute: Target[] | null
  /** Every provider by its name: `name/model` sends `model` to it as is. */
  providers: Map<string, ProviderConfig>
  /**
   * Sends any other name upstream as it is, to this provider: the `PLAZA_LLM_BASE_URL` one, or the
   * `inference` upstream without PLAZA_INFERENCE_MODEL.
   */
  passthrough?: ProviderConfig
  retry: RetryPolicy
  router: RouterPolicy
  /** What each call costs, by upstream model. */
  prices: PriceTable
  /** Every configured key, so that anything leaving the gateway can be scrubbed of them. */
  secrets: string[]
}

/** The names `PLAZA_LLM_BASE_URL` alone serves: the spec's aliases, the fixed operations and the catalog's gateway aliases. */
export const BUILT_IN_NAMES: readonly string[] = [...CHAT_MODEL_ALIASES, ...CHAT_OPERATIONS, ...GATEWAY_ALIASES]

const DEFAULT_TIMEOUT_MS = 300_000
const DEFAULT_MAX_TOKENS = 4096
const DEFAULT_RETRY: RetryPolicy = { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 10_000 }
const DEFAULT_ROUTER: RouterPolicy = { allowedFails: 3, failWindowMs: 60_000, cooldownMs: 30_000 }
const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (the key itself never goes in the file)')
const positiveMs = z.number().int().positive()

const providerSchema = z.strictObject({
  type: z.enum(['openai', 'anthropic']).default('openai'),
  base_url: httpUrl.optional(),
  api_key_env: envName.optional(),
  timeout_ms: positiveMs.optional(),
  extended_sampling: z.boolean().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  anthropic_version: z.string().optional(),
  responses_api: z.boolean().optional(),
})

const targetSchema = z.strictObject({
  provider: z.string().min(1),
  model: z.string().min(1),
  family: z.enum(['chat', 'o1']).optional(),
  max_tokens: z.number().int().positive().optional(),
  timeout_ms: positiveMs.optional(),
  /** `open`: the text starts inside the reasoning (R1 distills); `tags`: only a `<think>` opens it. Detected from the model name. */
  think: z.enum(['open', 'tags']).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
})

const routeSchema = targetSchema.extend({ fallbacks: z.array(targetSchema).optional() })

/** Dollars per million tokens. */
const dollarsPerMillion = z.number().min(0).max(1_000_000)
const priceSchema = z.strictObject({ input: dollarsPerMillion, output: dollarsPerMillion, cached_input: dollarsPerMillion.optional() })

const fileSchema = z.strictObject({
  providers: z.record(z.string().regex(/^[\w.-]+$/, 'provider names are letters, digits, _, . and -'), providerSchema).default({}),
  models: z.record(z.string().min(1).max(256), routeSchema).default({}),
  retry: z
    .strictObject({ max_retries: z.number().int().min(0).max(10).optional(), base_delay_ms: z.number().int().min(0).optional(), max_delay_ms: z.number().int().min(0).optional() })
    .optional(),
  router: z
    .strictObject({ allowed_fails: z.number().int().min(1).max(1000).optional(), fail_window_ms: positiveMs.optional(), cooldown_ms: z.number().int().min(0).optional() })
    .optional(),
  /** Dollars per million tokens by upstream model (or `provider/model`), over the built-in list prices. */
  prices: z.record(z.string().min(1).max(256), priceSchema).optional(),
  /** The provider layer's upstreams (providers/config.ts validates them). */
  services: z.unknown().optional(),
})
type FileConfig = z.output<typeof fileSchema>

/** The provider `PLAZA_LLM_BASE_URL` defines; the config file may name it too. */
const ENV_PROVIDER = 'env'

/** How to get a provider, for the 503 answer and the docs. */
export const HOW_TO_CONFIGURE =
  'No chat provider is configured. Set PLAZA_LLM_BASE_URL (an OpenAI-compatible base URL such as https://api.openai.com/v1, or https://api.anthropic.com) and PLAZA_LLM_API_KEY, optionally PLAZA_LLM_MODEL, or point PLAZA_LLM_CONFIG at a provider file (see docs/chat.md), then restart the server.'

export const HOW_TO_CONFIGURE_INFERENCE =
  'The inference upstream is not configured. Set PLAZA_INFERENCE_BASE_URL (an OpenAI-compatible base URL ending in /v1) and PLAZA_INFERENCE_API_KEY, optionally PLAZA_INFERENCE_MODEL, then restart the server.'

/** o1-preview, o1-mini, o3, o4-mini...: OpenAI's reasoning models reject system messages and max_tokens. */
export function detectFamily(model: string): ModelFamily {
  return /^(openai\/)?o\d(-|$)/i.test(model) ? 'o1' : 'chat'
}

/**
 * DeepSeek-R1 and its distills, and QwQ, served by vLLM or Ollama without a reasoning parser,
 * start with their reasoning and close it with `</think>` (their chat template opened it).
 * DeepSeek's own API (`deepseek-reasoner`) sends reasoning apart and is not one of them.
 */
export function detectStartsInReasoning(model: string): boolean {
  return /deepseek-r1|r1-distill|qwq/i.test(model)
}

type TargetOverrides = Partial<Pick<Target, 'family' | 'defaultMaxTokens' | 'timeoutMs' | 'params' | 'startsInReasoning'>>

/** The name that stands for "the model as the request names it" in a `default` route. */
const AS_ASKED = '*'

/** A target from its parts, with the defaults filled in. */
function makeTarget(provider: ProviderConfig, model: string, over: TargetOverrides = {}): Target {
  return {
    provider,
    model,
    family: over.family ?? detectFamily(model),
    defaultMaxTokens: over.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
    timeoutMs: over.timeoutMs ?? provider.timeoutMs,
    params: over.params ?? {},
    startsInReasoning: over.startsInReasoning ?? detectStartsInReasoning(model),
  }
}

/** The settings a `*` target was given explicitly, kept to be applied to each name it serves. */
const wildcardSettings = new WeakMap<Target, TargetOverrides>()

/** A target for one request's name (not tracked for cooldown). */
function dynamicTarget(provider: ProviderConfig, model: string, over: TargetOverrides = {}): Target {
  return { ...makeTarget(provider, model, over), dynamic: true }
}

function fail(message: string): never {
  throw new ConfigError(`chat configuration: ${message}`)
}

function readKey(env: NodeJS.ProcessEnv, variable: string, where: string): string {
  const value = lookup(env, variable)?.trim()
  if (!value) fail(`${where} names the environment variable ${variable}, which is not set`)
  return value
}

function timeoutFrom(env: NodeJS.ProcessEnv): number {
  const raw = env.PLAZA_LLM_TIMEOUT_MS?.trim()
  if (!raw) return DEFAULT_TIMEOUT_MS
  const ms = Number(raw)
  if (!Number.isInteger(ms) || ms <= 0) fail(`PLAZA_LLM_TIMEOUT_MS must be a whole number of milliseconds, not "${raw}"`)
  return ms
}

function envProvider(env: NodeJS.ProcessEnv): ProviderConfig | null {
  const baseUrl = env.PLAZA_LLM_BASE_URL?.trim()
  if (!baseUrl) {
    if (env.PLAZA_LLM_API_KEY?.trim() || env.PLAZA_LLM_MODEL?.trim()) fail('PLAZA_LLM_API_KEY and PLAZA_LLM_MODEL need PLAZA_LLM_BASE_URL')
    return null
  }
  if (!httpUrl.safeParse(baseUrl).success) fail(`PLAZA_LLM_BASE_URL must be an http(s) URL, not "${baseUrl}"`)
  const declared = env.PLAZA_LLM_PROVIDER?.trim().toLowerCase()
  if (declared && declared !== 'openai' && declared !== 'anthropic') fail(`PLAZA_LLM_PROVIDER must be openai or anthropic, not "${declared}"`)
  const type: ProviderType = (declared as ProviderType | undefined) ?? (new URL(baseUrl).hostname.endsWith('anthropic.com') ? 'anthropic' : 'openai')
  return {
    name: ENV_PROVIDER,
    type,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: env.PLAZA_LLM_API_KEY?.trim() || undefined,
    timeoutMs: timeoutFrom(env),
    extendedSampling: defaultExtendedSampling(type, baseUrl),
    headers: {},
    anthropicVersion: '2023-06-01',
    responsesApi: defaultResponsesApi(type, baseUrl),
  }
}

/** OpenAI's own API serves the Responses API; for any other provider it is translated to chat completions unless the file says it serves it. */
function defaultResponsesApi(type: ProviderType, baseUrl: string): boolean {
  return type === 'openai' && new URL(baseUrl).hostname === 'api.openai.com'
}

/** OpenAI's own API rejects unknown sampling fields; most self-hosted servers accept them. */
function defaultExtendedSampling(type: ProviderType, baseUrl: string): boolean {
  if (type === 'anthropic') return true // top_k only; repetition_penalty is never sent there
  return !/(^|\.)(openai\.com|groq\.com|deepseek\.com|x\.ai)$/.test(new URL(baseUrl).hostname)
}

function readFile(file: string): FileConfig {
  return readConfigFile(file, fileSchema, fail)
}

function providerFromFile(name: string, spec: FileConfig['providers'][string], env: NodeJS.ProcessEnv, fallbackTimeout: number): ProviderConfig {
  const baseUrl = spec.base_url ?? (spec.type === 'anthropic' ? ANTHROPIC_BASE_URL : fail(`providers.${name}.base_url is required for an openai provider`))
  return {
    name,
    type: spec.type,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: spec.api_key_env ? readKey(env, spec.api_key_env, `providers.${name}.api_key_env`) : undefined,
    timeoutMs: spec.timeout_ms ?? fallbackTimeout,
    extendedSampling: spec.extended_sampling ?? defaultExtendedSampling(spec.type, baseUrl),
    headers: spec.headers ?? {},
    anthropicVersion: spec.anthropic_version ?? '2023-06-01',
    responsesApi: spec.responses_api ?? defaultResponsesApi(spec.type, baseUrl),
  }
}

/**
 * Builds the chat configuration from the environment; null when nothing is configured
 * (every chat operation then answers 503 with {@link HOW_TO_CONFIGURE}). Throws ConfigError on mistakes.
 */
export function loadChatConfig(env: NodeJS.ProcessEnv, cwd = process.cwd()): ChatConfig | null {
  const fromEnv = envProvider(env)
  const file = env.PLAZA_LLM_CONFIG?.trim()
  if (!fromEnv && !file) return null

  const providers = new Map<string, ProviderConfig>()
  if (fromEnv) providers.set(ENV_PROVIDER, fromEnv)
  const parsed = file ? readFile(path.resolve(cwd, file)) : fileSchema.parse({})
  // A file that lists only the provider layer's services configures no chat.
  if (!fromEnv && Object.keys(parsed.providers).length === 0 && Object.keys(parsed.models).length === 0 && parsed.services !== undefined) return null
  for (const [name, spec] of Object.entries(parsed.providers)) {
    if (name === ENV_PROVIDER) fail(`providers.${ENV_PROVIDER} is reserved for the PLAZA_LLM_BASE_URL provider; pick another name`)
    providers.set(name, providerFromFile(name, spec, env, timeoutFrom(env)))
  }

  const target = (spec: z.output<typeof targetSchema>, where: string, wildcard: boolean): Target => {
    const provider = providers.get(spec.provider)
    if (!provider) {
      const known = [...providers.keys()].join(', ') || 'none'
      fail(`${where}.provider names "${spec.provider}", which is not a configured provider (configured: ${known})`)
    }
    if (spec.model === AS_ASKED && !wildcard) fail(`${where}.model is "${AS_ASKED}", which only the default route takes (it sends each name as asked)`)
    const over: TargetOverrides = {
      family: spec.family,
      defaultMaxTokens: spec.max_tokens,
      timeoutMs: spec.timeout_ms,
      params: spec.params,
      startsInReasoning: spec.think === undefined ? undefined : spec.think === 'open',
    }
    const made = makeTarget(provider, spec.model, over)
    if (spec.model === AS_ASKED) wildcardSettings.set(made, over)
    return made
  }

  const routes = new Map<string, Target[]>()
  let defaultRoute: Target[] | null = null
  for (const [name, spec] of Object.entries(parsed.models)) {
    const isDefault = name === 'default'
    const targets = [target(spec, `models.${name}`, isDefault), ...(spec.fallbacks ?? []).map((f, i) => target(f, `models.${name}.fallbacks.${i}`, isDefault))]
    if (isDefault) defaultRoute = targets
    else routes.set(name, targets)
  }
  // Any other name goes as asked to the PLAZA_LLM_BASE_URL provider (a file routes names by its map, prefixes and default).
  const passthrough = fromEnv ?? undefined
  // The built-in names go upstream as a model the provider knows, never as themselves: PLAZA_LLM_MODEL, else the documented default mapping (names.ts).
  const known = (provider: ProviderConfig, name: string) => (provider === fromEnv ? env.PLAZA_LLM_MODEL?.trim() : undefined) || defaultUpstreamModel(name, provider.type) || name
  for (const name of BUILT_IN_NAMES) {
    if (routes.has(name)) continue
    if (defaultRoute?.some((t) => t.model === AS_ASKED)) {
      routes.set(name, defaultRoute.map((t) => (t.model === AS_ASKED ? makeTarget(t.provider, known(t.provider, name), { ...wildcardSettings.get(t), family: undefined, startsInReasoning: undefined }) : t)))
    } else if (!defaultRoute && passthrough) routes.set(name, [makeTarget(passthrough, known(passthrough, name))])
  }
  if (routes.size === 0 && !defaultRoute && !passthrough) fail(`${file} maps no model: add a models section (or set PLAZA_LLM_BASE_URL for a default)`)

  const retry: RetryPolicy = {
    maxRetries: parsed.retry?.max_retries ?? DEFAULT_RETRY.maxRetries,
    baseDelayMs: parsed.retry?.base_delay_ms ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: parsed.retry?.max_delay_ms ?? DEFAULT_RETRY.maxDelayMs,
  }
  const router: RouterPolicy = {
    allowedFails: parsed.router?.allowed_fails ?? DEFAULT_ROUTER.allowedFails,
    failWindowMs: parsed.router?.fail_window_ms ?? DEFAULT_ROUTER.failWindowMs,
    cooldownMs: parsed.router?.cooldown_ms ?? DEFAULT_ROUTER.cooldownMs,
  }
  const secrets = [...providers.values()].map((p) => p.apiKey).filter((k): k is string => !!k)
  const prices: Record<string, Price> = {}
  for (const [name, price] of Object.entries(parsed.prices ?? {})) prices[name] = { input: price.input, output: price.output, cachedInput: price.cached_input }
  return { routes, defaultRoute, providers, ...(passthrough ? { passthrough } : {}), retry, router, prices: createPriceTable(prices), secrets }
}

/** A `*` target of the default route, made for one name (its explicit settings kept, the rest detected from the name). */
function asAsked(target: Target, name: string): Target {
  if (target.model !== AS_ASKED) return target
  return dynamicTarget(target.provider, name, wildcardSettings.get(target))
}

/**
 * The ordered targets for a model name; null when this configuration does not serve it. In turn:
 * a name the file maps (or a built-in name), `provider/model` (the model as is, to that provider),
 * the file's `default` route, then the passthrough provider with the name as asked.
 */
export function targetsFor(config: ChatConfig, name: string): Target[] | null {
  const mapped = config.routes.get(name)
  if (mapped) return mapped
  const slash = name.indexOf('/')
  if (slash > 0 && slash < name.length - 1) {
    const provider = config.providers.get(name.slice(0, slash))
    if (provider) return [dynamicTarget(provider, name.slice(slash + 1))]
  }
  if (config.defaultRoute) return config.defaultRoute.map((target) => asAsked(target, name))
  return config.passthrough ? [dynamicTarget(config.passthrough, name)] : null
}

/**
 * The second OpenAI-compatible upstream of `POST /api/inference/chat/completions` (a hosted
 * inference service: Together, Fireworks, DeepInfra, Hugging Face's router, a vLLM box...):
 * `PLAZA_INFERENCE_BASE_URL`, `PLAZA_INFERENCE_API_KEY`, and optionally `PLAZA_INFERENCE_MODEL`,
 * the one model it serves. Without a model, each request's `model` goes upstream as named. Null
 * when it is not configured.
 */
export function loadInferenceConfig(env: NodeJS.ProcessEnv): ChatConfig | null {
  const baseUrl = env.PLAZA_INFERENCE_BASE_URL?.trim()
  if (!baseUrl) {
    if (env.PLAZA_INFERENCE_API_KEY?.trim() || env.PLAZA_INFERENCE_MODEL?.trim()) fail('PLAZA_INFERENCE_API_KEY and PLAZA_INFERENCE_MODEL need PLAZA_INFERENCE_BASE_URL')
    return null
  }
  if (!httpUrl.safeParse(baseUrl).success) fail(`PLAZA_INFERENCE_BASE_URL must be an http(s) URL, not "${baseUrl}"`)
  const apiKey = env.PLAZA_INFERENCE_API_KEY?.trim() || undefined
  const provider: ProviderConfig = {
    name: 'inference',
    type: 'openai',
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey,
    timeoutMs: timeoutFrom(env),
    extendedSampling: defaultExtendedSampling('openai', baseUrl),
    headers: {},
    anthropicVersion: '2023-06-01',
    responsesApi: false,
  }
  const model = env.PLAZA_INFERENCE_MODEL?.trim()
  return {
    routes: new Map(),
    defaultRoute: model ? [makeTarget(provider, model)] : null,
    providers: new Map(),
    ...(model ? {} : { passthrough: provider }),
    retry: DEFAULT_RETRY,
    // Any name may be asked for: cooling names down would keep a state per name a stranger makes up.
    router: { ...DEFAULT_ROUTER, cooldownMs: 0 },
    prices: createPriceTable(),
    secrets: apiKey ? [apiKey] : [],
  }
}

/** What a configuration serves, for `GET /api/chat/providers` and `/api/chat/models`: names, types and upstream models, never keys or URLs. */
export function describeChatConfig(config: ChatConfig): {
  providers: Array<{ name: string; type: ProviderType }>
  models: Array<{ id: string; targets: Array<{ provider: string; model: string }> }>
} {
  const providers = new Map<string, ProviderType>()
  const models = new Map<string, Target[]>()
  if (config.defaultRoute) for (const name of BUILT_IN_NAMES) models.set(name, config.defaultRoute)
  for (const [name, targets] of config.routes) models.set(name, targets)
  for (const targets of models.values()) for (const target of targets) providers.set(target.provider.name, target.provider.type)
  for (const provider of config.providers.values()) providers.set(provider.name, provider.type)
  if (config.passthrough) providers.set(config.passthrough.name, config.passthrough.type)
  return {
    providers: [...providers].map(([name, type]) => ({ name, type })),
    models: [...models].map(([id, targets]) => ({ id, targets: targets.map((target) => ({ provider: target.provider.name, model: target.model })) })),
  }
}

/**
 * Every model name this configuration serves, each with the provider of its first choice: the
 * names the file maps, and, when a default serves every other name, the built-in ones too.
 */
export function servedModels(config: ChatConfig): Array<{ id: string; provider: string }> {
  const served = new Map<string, string>()
  if (config.defaultRoute) for (const name of BUILT_IN_NAMES) served.set(name, config.defaultRoute[0].provider.name)
  for (const [name, targets] of config.routes) served.set(name, targets[0].provider.name)
  return [...served].map(([id, provider]) => ({ id, provider }))
}
