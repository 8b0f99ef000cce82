/**
 * The chat gateway: resolves an alias to its ordered targets, calls them with retries (429, 5xx,
 * dropped connections; Retry-After honoured up to a cap) and then the fallbacks, and turns the
 * answer into Plaza's shape: the raw text, and reasoning and answer split apart.
 * A stream can be retried or moved to a fallback only until its first piece has arrived.
 */
import { randomBytes } from 'node:crypto'
import type { Dispatcher } from 'undici'
import type { ChatMessage, ChatUsage, Sampling } from '../../shared/schemas/chat.js'
import type { Logger } from '../logger.js'
import type { UpstreamOutcome } from '../metrics/recorder.js'
import { HOW_TO_CONFIGURE, targetsFor, type ChatConfig, type Target } from './config.js'
import { ClientAbortError, GatewayError, redact, UpstreamError } from './errors.js'
import { anthropicProvider } from './providers/anthropic.js'
import { openaiProvider } from './providers/openai.js'
import type { Delta, Provider, UpstreamCall } from './providers/types.js'
import { splitThink, ThinkSplitter } from './think.js'

export interface ChatRequest {
  /** An alias of the completions operation, or `chaty` / `reasoning-70b`. */
  model: string
  messages: ChatMessage[]
  sampling: Sampling
}

export interface ChatResult {
  id: string
  /** Unix seconds. */
  created: number
  model: string
  /** The operator's name for the provider that answered (after any fallback). */
  provider: string
  /** The assistant text as the provider produced it, `<think>` block included. */
  message: string
  reasoning: string
  answer: string
  finishReason: string
  usage?: ChatUsage
}

export type ChatStreamEvent = { type: 'delta'; content?: string; reasoning?: string } | { type: 'done'; finishReason: string; usage?: ChatUsage }

export interface ChatStream {
  id: string
  created: number
  model: string
  provider: string
  /** The answer as it arrives; throws a GatewayError if the upstream breaks off. */
  events: AsyncIterable<ChatStreamEvent>
}

export interface ChatGateway {
  /** False when nothing is configured: every call then fails with 503. */
  readonly configured: boolean
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>
  stream(request: ChatRequest, signal?: AbortSignal): Promise<ChatStream>
  close(): Promise<void>
}

export interface GatewayOptions {
  logger?: Logger
  /** Injected so that tests of backoff and Retry-After do not wait. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  random?: () => number
  now?: () => Date
  dispatcher?: Dispatcher
  /** Told of every call to a provider (each retry and fallback is one), by the operator's name for the provider; never a key. */
  onUpstreamCall?: (provider: string, outcome: UpstreamOutcome) => void
}

const PROVIDERS: Record<Target['provider']['type'], Provider> = { openai: openaiProvider, anthropic: anthropicProvider }

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ClientAbortError())
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(new ClientAbortError())
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** A failed call's outcome for the metrics: its HTTP status, or how it failed without one. */
function outcomeOf(error: UpstreamError): UpstreamOutcome {
  return error.kind === 'http' && error.status !== undefined ? `http_${error.status}` : error.kind === 'http' ? 'protocol' : error.kind
}

function completionId(): string {
  return 'chatcmpl-' + randomBytes(15).toString('base64url')
}

export function createChatGateway(config: ChatConfig | null, options: GatewayOptions = {}): ChatGateway {
  const logger = options.logger
  const sleep = options.sleep ?? abortableSleep
  const random = options.random ?? Math.random
  const now = options.now ?? (() => new Date())
  const secrets = config?.secrets ?? []
  let closed = false
  // One keep-alive pool for all upstream calls; timeouts are the gateway's own (see providers/http.ts).
  // Created (and undici loaded) at the first upstream call, so that creating the gateway costs nothing.
  let pool: Promise<Dispatcher> | undefined
  const dispatcher = (): Promise<Dispatcher> => {
    if (options.dispatcher) return Promise.resolve(options.dispatcher)
    if (closed) return Promise.reject(new Error('the chat gateway is closed'))
    return (pool ??= import('undici').then(({ Agent }) => new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000, connect: { timeout: 10_000 } })))
  }

  function resolve(name: string): Target[] {
    if (!config) throw new GatewayError(503, 'provider_not_configured', HOW_TO_CONFIGURE)
    const targets = targetsFor(config, name)
    if (!targets) throw new GatewayError(503, 'provider_not_configured', `No provider is configured for "${name}". Add it (or a default) to the models of the PLAZA_LLM_CONFIG file, or set PLAZA_LLM_BASE_URL for a default provider.`)
    return targets
  }

  function backoff(attempt: number, error: UpstreamError): number | null {
    const policy = config!.retry
    if (error.retryAfterMs !== undefined) return error.retryAfterMs <= policy.maxDelayMs ? error.retryAfterMs : null
    const exponential = policy.baseDelayMs * 2 ** attempt
    return Math.min(policy.maxDelayMs, Math.round(exponential * (0.5 + random() / 2)))
  }

  /** Runs `attempt` over the targets in order with retries; the first success wins. */
  async function withFallback<T>(request: ChatRequest, signal: AbortSignal, attempt: (call: UpstreamCall, provider: Provider) => Promise<T>): Promise<{ value: T; target: Target }> {
    const targets = resolve(request.model)
    const upstream = await dispatcher()
    let last: UpstreamError | undefined
    for (const target of targets) {
      const call: UpstreamCall = { target, messages: request.messages, sampling: request.sampling, signal, dispatcher: upstream }
      for (let retry = 0; ; retry++) {
        try {
          const value = await attempt(call, PROVIDERS[target.provider.type])
          // A stream counts as answered once its first piece has arrived.
          options.onUpstreamCall?.(target.provider.name, 'ok')
          return { value, target }
        } catch (error) {
          if (!(error instanceof UpstreamError)) throw error
          options.onUpstreamCall?.(target.provider.name, outcomeOf(error))
          last = error
          const delay = error.retryable && retry < config!.retry.maxRetries ? backoff(retry, error) : null
          logger?.info('chat upstream failed', { model: request.model, provider: target.provider.name, upstream_model: target.model, attempt: retry + 1, kind: error.kind, status: error.status, message: redact(error.message, secrets), next: delay === null ? 'fallback' : `retry in ${delay} ms` })
          if (delay === null) break
          await sleep(delay, signal)
        }
      }
    }
    const tried = targets.length > 1 ? ` (tried ${targets.length} providers)` : ''
    const message = redact(`${last!.message}${tried}`, secrets)
    if (last!.kind === 'timeout') throw new GatewayError(504, 'upstream_timeout', message)
    throw new GatewayError(502, 'upstream_error', message)
  }

  /** Turns upstream deltas into client events: the `<think>` block split out, reasoning passed through. */
  async function* events(first: IteratorResult<Delta>, iterator: AsyncIterator<Delta>): AsyncIterable<ChatStreamEvent> {
    const splitter = new ThinkSplitter()
    let finishReason = 'stop'
    let usage: ChatUsage | undefined
    let next = first
    try {
      while (!next.done) {
        const delta = next.value
        const parts = delta.content ? splitter.push(delta.content) : { reasoning: '', content: '' }
        const reasoning = (delta.reasoning ?? '') + parts.reasoning
        if (reasoning || parts.content) yield { type: 'delta', ...(reasoning ? { reasoning } : {}), ...(parts.content ? { content: parts.content } : {}) }
        if (delta.finishReason) finishReason = delta.finishReason
        if (delta.usage) usage = delta.usage
        next = await iterator.next()
      }
    } catch (error) {
      if (error instanceof UpstreamError) {
        const message = redact(error.message, secrets)
        logger?.info('chat stream broke off', { message })
        throw new GatewayError(error.kind === 'timeout' ? 504 : 502, error.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', message)
      }
      throw error
    } finally {
      if (!next.done) await iterator.return?.()
    }
    const rest = splitter.end()
    if (rest.reasoning || rest.content) yield { type: 'delta', ...(rest.reasoning ? { reasoning: rest.reasoning } : {}), ...(rest.content ? { content: rest.content } : {}) }
    yield { type: 'done', finishReason, usage }
  }

  return {
    configured: config !== null,

    async complete(request, signal = new AbortController().signal) {
      const { value, target } = await withFallback(request, signal, (call, provider) => provider.complete(call))
      const parts = splitThink(value.content)
      return {
        id: completionId(),
        created: Math.floor(now().getTime() / 1000),
        model: request.model,
        provider: target.provider.name,
        message: value.content,
        reasoning: [value.reasoning, parts.reasoning].filter(Boolean).join('\n\n'),
        answer: parts.content,
        finishReason: value.finishReason,
        usage: value.usage,
      }
    },

    async stream(request, signal = new AbortController().signal) {
      const { value, target } = await withFallback(request, signal, async (call, provider) => {
        const iterator = (await provider.stream(call))[Symbol.asyncIterator]()
        // Wait for the first piece inside the retry loop, so a stream that fails at once is retried too.
        return { iterator, first: await iterator.next() }
      })
      return {
        id: completionId(),
        created: Math.floor(now().getTime() / 1000),
        model: request.model,
        provider: target.provider.name,
        events: events(value.first, value.iterator),
      }
    },

    async close() {
      if (closed || options.dispatcher) return
      closed = true
      if (pool) await (await pool).close()
    },
  }
}
