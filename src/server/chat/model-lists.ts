/**
 * What each configured provider serves, from its own models endpoint (OpenAI-compatible
 * `GET {base}/models`, Anthropic's `GET /v1/models`), for `GET /v1/models`. Each list is kept for
 * LIST_TTL_MS and then refreshed in the background while the old one is still answered; a
 * provider that fails (or has no such endpoint) lists nothing, and is asked again after
 * FAILED_TTL_MS. Only the first listing waits for the providers, at most LIST_TIMEOUT_MS.
 */
import type { Dispatcher } from 'undici'
import type { Logger } from '../logger.js'
import { requestUpstream } from '../providers/http.js'
import { redact } from '../providers/errors.js'
import type { ProviderConfig } from './config.js'

export const LIST_TTL_MS = 10 * 60_000
const FAILED_TTL_MS = 60_000
const LIST_TIMEOUT_MS = 10_000
/** A provider's list is read up to this size, and kept up to this many names. */
const LIST_BYTES = 4 * 1024 * 1024
const LIST_MAX = 5000

export interface ListedModel {
  /** As a client names it: bare for the passthrough provider, `provider/model` for the others. */
  id: string
  provider: string
  /** Unix seconds, when the provider says. */
  created?: number
}

export interface ModelLists {
  /** Every provider's models (a stale list is answered while it refreshes in the background). */
  list(): Promise<ListedModel[]>
  /** Resolves once no list is being fetched (a background refresh has ended). */
  settled(): Promise<void>
}

interface State {
  models: ListedModel[]
  at: number
  ttl: number
  loading?: Promise<void>
}

const PRINTABLE = /^[\x21-\x7e]{1,256}$/

function createdOf(entry: any): number | undefined {
  if (Number.isInteger(entry?.created) && entry.created > 0) return entry.created
  const parsed = typeof entry?.created_at === 'string' ? Date.parse(entry.created_at) : NaN
  return Number.isNaN(parsed) ? undefined : Math.floor(parsed / 1000)
}

export function createModelLists(options: {
  providers: ProviderConfig[]
  /** The provider whose models are listed bare (the rest are `name/model`). */
  bare?: ProviderConfig
  dispatcher: () => Promise<Dispatcher>
  now: () => number
  secrets: readonly string[]
  logger?: Logger
}): ModelLists {
  const states = new Map<string, State>()

  async function fetchList(provider: ProviderConfig): Promise<ListedModel[]> {
    const anthropic = provider.type === 'anthropic'
    const response = await requestUpstream({
      method: 'GET',
      url: anthropic ? `${provider.baseUrl}/v1/models?limit=1000` : `${provider.baseUrl}/models`,
      headers: {
        ...provider.headers,
        ...(anthropic
          ? { 'anthropic-version': provider.anthropicVersion, ...(provider.apiKey ? { 'x-api-key': provider.apiKey } : {}) }
          : provider.apiKey
            ? { authorization: `Bearer ${provider.apiKey}` }
            : {}),
      },
      timeoutMs: Math.min(provider.timeoutMs, LIST_TIMEOUT_MS),
      signal: new AbortController().signal,
      dispatcher: await options.dispatcher(),
      label: `provider "${provider.name}" (its model list)`,
    })
    const body = await response.json(LIST_BYTES)
    // OpenAI's `{data: [...]}`; Ollama's and some servers' `{models: [...]}`.
    const entries: any[] = Array.isArray(body?.data) ? body.data : Array.isArray(body?.models) ? body.models : []
    const prefix = provider === options.bare ? '' : `${provider.name}/`
    const seen = new Set<string>()
    const models: ListedModel[] = []
    for (const entry of entries) {
      const id = typeof entry?.id === 'string' ? entry.id : typeof entry?.name === 'string' ? entry.name : undefined
      if (!id || !PRINTABLE.test(id) || seen.has(id)) continue
      seen.add(id)
      const created = createdOf(entry)
      models.push({ id: prefix + id, provider: provider.name, ...(created ? { created } : {}) })
      if (models.length >= LIST_MAX) break
    }
    return models
  }

  function refresh(provider: ProviderConfig): Promise<void> {
    const state = states.get(provider.name)
    if (state?.loading) return state.loading
    const loading: Promise<void> = fetchList(provider).then(
      (models) => void states.set(provider.name, { models, at: options.now(), ttl: LIST_TTL_MS }),
      (error) => {
        options.logger?.info('listing a provider\'s models failed', { provider: provider.name, message: redact(String((error as Error)?.message ?? error), options.secrets) })
        // Keep what was listed before, if anything, and try again sooner.
        states.set(provider.name, { models: state?.models ?? [], at: options.now(), ttl: FAILED_TTL_MS })
      },
    )
    states.set(provider.name, { ...(state ?? { models: [], at: -Infinity, ttl: 0 }), loading })
    return loading
  }

  return {
    async list() {
      const now = options.now()
      const first: Promise<void>[] = []
      for (const provider of options.providers) {
        const state = states.get(provider.name)
        if (!state || (state.at === -Infinity && state.loading)) first.push(refresh(provider))
        else if (now - state.at >= state.ttl) void refresh(provider)
      }
      await Promise.all(first)
      return options.providers.flatMap((provider) => states.get(provider.name)?.models ?? [])
    },

    async settled() {
      await Promise.all([...states.values()].map((state) => state.loading))
    },
  }
}
