/**
 * The chat gateway: resolves an alias to its ordered targets, calls them with retries (429, 5xx,
 * dropped connections; Retry-After honoured up to a cap) and then the fallbacks, and turns the
 * answer into Plaza's shape: the raw text, and reasoning and answer split apart.
 * A stream can be retried or moved to a fallback only until its first piece has arrived.
 */
import { randomBytes } from 'node:crypto'
import type { Dispatcher } from 'undici'
import type { ChatMessage, ChatParams, ChatUsage } from '../../shared/schemas/chat.js'
import type { Logger } from '../logger.js'
import type { UpstreamOutcome } from '../metrics/recorder.js'
import { describeChatConfig, HOW_TO_CONFIGURE, servedModels, targetsFor, type ChatConfig, type ProviderConfig, type Target } from './config.js'
import { requestUpstream, type RequestOptions, type UpstreamResponse } from '../providers/http.js'
import { abortableSleep, outcomeOf, retryDelay } from '../providers/layer.js'
import { GatewayError, redact, UpstreamError } from './errors.js'
import { createDeploymentHealth } from './health.js'
import { createModelLists, type ListedModel } from './model-lists.js'
import { anthropicProvider } from './providers/anthropic.js'
import { openaiProvider } from './providers/openai.js'
import type { Completion, CompletionChoice, Delta, Provider, ToolCallDelta, UpstreamCall } from './providers/types.js'
import { splitThink, ThinkSplitter } from './think.js'

export interface ChatRequest {
  /** Any name the configuration serves: a spec alias, a fixed operation, or a name of the provider file. */
  model: string
  messages: ChatMessage[]
  /** Every other request field (tools, response_format, sampling, unknown extras), as the client sent them. */
  params: ChatParams
}

/** One choice of the answer, its text split: `reasoning` also holds a leading `<think>` block's text. */
export interface ResultChoice extends Omit<CompletionChoice, 'content'> {
  /** The text as the provider produced it, `<think>` block included ('' when it only called tools). */
  message: string
  /** The answer without the reasoning; null when the choice only called tools. */
  content: string | null
}

export interface ChatResult {
  id: string
  /** Unix seconds. */
  created: number
  model: string
  /** The operator's name for the provider that answered (after any fallback). */
  provider: string
  /** The target that answered (for the call's price). */
  target: Target
  choices: ResultChoice[]
  usage?: ChatUsage
  /** What the call cost by the price table, in nano-dollars (0 when its model has no price). */
  cost: number
  systemFingerprint?: string
  upstreamRequestId?: string
  /** The first choice's raw text, `<think>` block included. */
  message: string
  reasoning: string
  answer: string
  finishReason: string
}

export type ChatStreamEvent =
  | { type: 'delta'; index: number; content?: string; reasoning?: string; toolCalls?: ToolCallDelta[]; refusal?: string; logprobs?: unknown }
  | { type: 'done'; finishReasons: Array<{ index: number; finishReason: string }>; usage?: ChatUsage; cost: number }

export interface ChatStream {
  id: string
  created: number
  model: string
  provider: string
  /** The target that answered (for the call's price). */
  target: Target
  upstreamRequestId?: string
  /** The answer as it arrives; throws a GatewayError if the upstream breaks off. */
  events: AsyncIterable<ChatStreamEvent>
}

/** One try of one target, as a surface (chat, responses, messages, embeddings, audio) makes it. */
export interface Attempt {
  target: Target
  /** The chat protocol of the target's provider (OpenAI-compatible or Anthropic). */
  provider: Provider
  signal: AbortSignal
  /** The chat call of `request` to this target: its model, and its own parameters under the request's. */
  chatCall(request: ChatRequest): UpstreamCall
  /** A request to this target's provider with the gateway's pool, the target's timeout and the client's abort. */
  request(options: Omit<RequestOptions, 'timeoutMs' | 'signal' | 'dispatcher' | 'label'> & { timeoutMs?: number }): Promise<UpstreamResponse>
  /** Names the target in messages: `provider "openai" (gpt-4o-mini)`. */
  label: string
}

export interface CallOptions {
  /** Only the targets that can serve this call (an embeddings call needs an OpenAI-compatible provider). */
  accepts?: (target: Target) => boolean
  /** The 400's message when no target of the model can (its param is `model`). */
  refusal?: string
}

export interface ChatGateway {
  /** False when nothing is configured: every call then fails with 503. */
  readonly configured: boolean
  /** Unix seconds when the gateway was set up (the `created` of its models). */
  readonly createdAt: number
  /** The model names served, with the provider of each one's first choice (no keys, no URLs). */
  models(): Array<{ id: string; provider: string }>
  /** The served names, then what each provider's own models endpoint lists (cached; refreshed in the background). */
  listModels(): Promise<ListedModel[]>
  /** The providers and every served name's targets (no keys, no URLs); empty when nothing is configured. */
  describe(): ReturnType<typeof describeChatConfig>
  /** Throws the GatewayError a call to this model would fail with at once (503 nothing configured, 404 a name nothing serves). */
  assertServes(model: string): void
  /** The model's targets in order (throws as assertServes does). */
  targets(model: string): Target[]
  /** Scrubs every configured key from text. */
  redact(text: string): string
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>
  stream(request: ChatRequest, signal?: AbortSignal): Promise<ChatStream>
  /**
   * Runs `attempt` over the model's targets in order, with retries (429, 5xx, dropped connections)
   * and then the fallbacks; deployments cooling down are skipped. The first success wins; what fails
   * everywhere is a GatewayError (502, or 504 after a timeout), scrubbed of every key.
   */
  call<T>(model: string, signal: AbortSignal, attempt: (attempt: Attempt) => Promise<T>, options?: CallOptions): Promise<{ value: T; target: Target }>
  /** A provider's complete chat answer as the gateway's result, its text split. */
  result(request: ChatRequest, completion: Completion, target: Target): ChatResult
  /** A provider's streamed chat answer as the gateway's events, from its first piece on. */
  events(first: IteratorResult<Delta>, iterator: AsyncIterator<Delta>, target: Target): AsyncIterable<ChatStreamEvent>
  /** What a call of this target cost, in nano-dollars (0 when its model has no price). */
  cost(target: Pick<Target, 'provider' | 'model'>, usage: ChatUsage | undefined): number
  /** A failure met after an answer began (a stream cut off): the GatewayError a client sees, scrubbed of every key. */
  failure(error: unknown): unknown
  /** One request to a provider by its name (no retries; e.g. deleting a response it keeps); null when there is no such provider. */
  requestProvider(name: string, options: Omit<RequestOptions, 'timeoutMs' | 'dispatcher' | 'label'>): Promise<UpstreamResponse> | null
  /** A provider by its name (no key or URL leaves the gateway through it: for building a request only). */
  provider(name: string): ProviderConfig | undefined
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
  /** The 503's message when nothing is configured (default: how to configure the chat gateway). */
  notConfigured?: string
}

const PROVIDERS: Record<Target['provider']['type'], Provider> = { openai: openaiProvider, anthropic: anthropicProvider }

function completionId(): string {
  return 'chatcmpl-' + randomBytes(15).toString('base64url')
}

export function createChatGateway(config: ChatConfig | null, options: GatewayOptions = {}): ChatGateway {
  const logger = options.logger
  const sleep = options.sleep ?? abortableSleep
  const random = options.random ?? Math.random
  const now = options.now ?? (() => new Date())
  const secrets = config?.secrets ?? []
  const health = config ? createDeploymentHealth(config.router) : null
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
    if (!config) throw new GatewayError(503, 'provider_not_configured', options.notConfigured ?? HOW_TO_CONFIGURE)
    const targets = targetsFor(config, name)
    if (!targets) {
      throw new GatewayError(404, 'model_not_found', `The model "${name}" is not served here: GET /api/v1/models lists the names that are (the operator maps names in the PLAZA_LLM_CONFIG file).`, 'model')
    }
    return targets
  }

  const backoff = (attempt: number, error: UpstreamError): number | null => retryDelay(config!.retry, attempt, error, random)
  const cost = (target: Pick<Target, 'provider' | 'model'>, usage: ChatUsage | undefined): number => (config ? config.prices.cost(target.provider.name, target.model, usage) : 0)

  async function call<T>(model: string, signal: AbortSignal, attempt: (attempt: Attempt) => Promise<T>, callOptions: CallOptions = {}): Promise<{ value: T; target: Target }> {
    const resolved = resolve(model)
    const targets = callOptions.accepts ? resolved.filter(callOptions.accepts) : resolved
    if (targets.length === 0) throw new GatewayError(400, 'unsupported_for_model', callOptions.refusal ?? `No provider of the model "${model}" can serve this call.`, 'model')
    const upstream = await dispatcher()
    // Deployments cooling down are skipped while another is healthy; when none is, all are tried all the same.
    const healthy = targets.filter((target) => target.dynamic || !health!.coolingDown(target, now().getTime()))
    const candidates = healthy.length > 0 ? healthy : targets
    let last: UpstreamError | undefined
    for (const target of candidates) {
      const label = `provider "${target.provider.name}" (${target.model})`
      const tries: Attempt = {
        target,
        provider: PROVIDERS[target.provider.type],
        signal,
        label,
        chatCall: (request) => ({ target, messages: request.messages, params: { ...target.params, ...request.params }, signal, dispatcher: upstream }),
        request: (options) => requestUpstream({ ...options, timeoutMs: options.timeoutMs ?? target.timeoutMs, signal, dispatcher: upstream, label }),
      }
      for (let retry = 0; ; retry++) {
        try {
          const value = await attempt(tries)
          // A stream counts as answered once its first piece has arrived.
          options.onUpstreamCall?.(target.provider.name, 'ok')
          return { value, target }
        } catch (error) {
          if (!(error instanceof UpstreamError)) throw error
          options.onUpstreamCall?.(target.provider.name, outcomeOf(error))
          last = error
          if (!target.dynamic && health!.failed(target, error, now().getTime())) {
            logger?.warn('chat deployment cooling down', { provider: target.provider.name, upstream_model: target.model, failures: config!.router.allowedFails, cooldown_ms: config!.router.cooldownMs })
          }
          const delay = error.retryable && retry < config!.retry.maxRetries ? backoff(retry, error) : null
          logger?.info('chat upstream failed', { model, provider: target.provider.name, upstream_model: target.model, attempt: retry + 1, kind: error.kind, status: error.status, message: redact(error.message, secrets), next: delay === null ? 'fallback' : `retry in ${delay} ms` })
          if (delay === null) break
          await sleep(delay, signal)
        }
      }
    }
    const tried = candidates.length > 1 ? ` (tried ${candidates.length} providers)` : ''
    const message = redact(`${last!.message}${tried}`, secrets)
    if (last!.kind === 'timeout') throw new GatewayError(504, 'upstream_timeout', message)
    // A name passed through as asked that the provider does not know: the client's mistake, as OpenAI answers it.
    if (last!.status === 404 && candidates.at(-1)!.dynamic) throw new GatewayError(404, 'model_not_found', message, 'model')
    throw new GatewayError(502, 'upstream_error', message)
  }

  /** A cut stream (an UpstreamError after the first piece) as the client's GatewayError. */
  function failure(error: unknown): unknown {
    if (!(error instanceof UpstreamError)) return error
    const message = redact(error.message, secrets)
    logger?.info('chat stream broke off', { message })
    return new GatewayError(error.kind === 'timeout' ? 504 : 502, error.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', message)
  }

  /**
   * Turns upstream deltas into client events: each choice's `<think>` block split out, reasoning and
   * tool calls passed through, and the finish reasons held for the end, where the usage joins them.
   */
  async function* events(first: IteratorResult<Delta>, iterator: AsyncIterator<Delta>, target: Target): AsyncIterable<ChatStreamEvent> {
    const splitters = new Map<number, ThinkSplitter>()
    const splitter = (index: number) => {
      let found = splitters.get(index)
      if (!found) splitters.set(index, (found = new ThinkSplitter({ startsInReasoning: target.startsInReasoning })))
      return found
    }
    const finishReasons = new Map<number, string>()
    let usage: ChatUsage | undefined
    let next = first
    try {
      while (!next.done) {
        const delta = next.value
        const index = delta.index ?? 0
        if (delta.reasoning) splitter(index).reasoningIsSeparate()
        const parts = delta.content ? splitter(index).push(delta.content) : { reasoning: '', content: '' }
        const reasoning = (delta.reasoning ?? '') + parts.reasoning
        if (reasoning || parts.content || delta.toolCalls || delta.refusal || delta.logprobs) {
          yield {
            type: 'delta',
            index,
            ...(reasoning ? { reasoning } : {}),
            ...(parts.content ? { content: parts.content } : {}),
            ...(delta.toolCalls ? { toolCalls: delta.toolCalls } : {}),
            ...(delta.refusal ? { refusal: delta.refusal } : {}),
            ...(delta.logprobs ? { logprobs: delta.logprobs } : {}),
          }
        }
        if (delta.finishReason) finishReasons.set(index, delta.finishReason)
        if (delta.usage) usage = delta.usage
        next = await iterator.next()
      }
    } catch (error) {
      throw failure(error)
    } finally {
      if (!next.done) await iterator.return?.()
    }
    for (const [index, active] of splitters) {
      const rest = active.end()
      if (rest.reasoning || rest.content) yield { type: 'delta', index, ...(rest.reasoning ? { reasoning: rest.reasoning } : {}), ...(rest.content ? { content: rest.content } : {}) }
    }
    if (finishReasons.size === 0) finishReasons.set(0, 'stop')
    yield { type: 'done', finishReasons: [...finishReasons].sort((a, b) => a[0] - b[0]).map(([index, finishReason]) => ({ index, finishReason })), usage, cost: cost(target, usage) }
  }

  /** A complete choice with its text split. */
  function resultChoice(choice: CompletionChoice, target: Target): ResultChoice {
    const text = choice.content ?? ''
    const parts = splitThink(text, { startsInReasoning: target.startsInReasoning && !choice.reasoning })
    return {
      index: choice.index,
      message: text,
      content: choice.content === null ? null : parts.content,
      reasoning: [choice.reasoning, parts.reasoning].filter(Boolean).join('\n\n'),
      ...(choice.toolCalls ? { toolCalls: choice.toolCalls } : {}),
      ...(choice.refusal !== undefined ? { refusal: choice.refusal } : {}),
      ...(choice.logprobs !== undefined ? { logprobs: choice.logprobs } : {}),
      finishReason: choice.finishReason,
    }
  }

  function result(request: ChatRequest, value: Completion, target: Target): ChatResult {
    const choices = value.choices.map((choice) => resultChoice(choice, target))
    const first = choices[0]
    return {
      id: completionId(),
      created: Math.floor(now().getTime() / 1000),
      model: request.model,
      provider: target.provider.name,
      target,
      choices,
      usage: value.usage,
      cost: cost(target, value.usage),
      ...(value.systemFingerprint ? { systemFingerprint: value.systemFingerprint } : {}),
      ...(value.upstreamRequestId ? { upstreamRequestId: value.upstreamRequestId } : {}),
      message: first.message,
      reasoning: first.reasoning,
      answer: first.content ?? '',
      finishReason: first.finishReason,
    }
  }

  const lists = config
    ? createModelLists({ providers: [...new Set([...config.providers.values()])], bare: config.passthrough, dispatcher, now: () => now().getTime(), secrets, logger })
    : null

  return {
    configured: config !== null,

    createdAt: Math.floor(now().getTime() / 1000),

    models: () => (config ? servedModels(config) : []),

    async listModels() {
      if (!config || !lists) return []
      const served: ListedModel[] = servedModels(config)
      const names = new Set(served.map((model) => model.id))
      return [...served, ...(await lists.list()).filter((model) => !names.has(model.id) && names.add(model.id))]
    },

    describe: () => (config ? describeChatConfig(config) : { providers: [], models: [] }),

    assertServes: (model) => void resolve(model),

    targets: resolve,

    redact: (text) => redact(text, secrets),

    call,

    result,

    events,

    failure,

    cost,

    provider: (name) => config?.providers.get(name) ?? (config?.passthrough?.name === name ? config.passthrough : undefined),

    requestProvider(name, request) {
      const provider = config?.providers.get(name) ?? (config?.passthrough?.name === name ? config.passthrough : undefined)
      if (!provider) return null
      return dispatcher().then((upstream) => requestUpstream({ ...request, timeoutMs: provider.timeoutMs, dispatcher: upstream, label: `provider "${name}"` }))
    },

    async complete(request, signal = new AbortController().signal) {
      const { value, target } = await call(request.model, signal, (attempt) => attempt.provider.complete(attempt.chatCall(request)))
      return result(request, value, target)
    },

    async stream(request, signal = new AbortController().signal) {
      const { value, target } = await call(request.model, signal, async (attempt) => {
        const started = await attempt.provider.stream(attempt.chatCall(request))
        const iterator = started.deltas[Symbol.asyncIterator]()
        // Wait for the first piece inside the retry loop, so a stream that fails at once is retried too.
        return { iterator, first: await iterator.next(), upstreamRequestId: started.upstreamRequestId }
      })
      return {
        id: completionId(),
        created: Math.floor(now().getTime() / 1000),
        model: request.model,
        provider: target.provider.name,
        target,
        ...(value.upstreamRequestId ? { upstreamRequestId: value.upstreamRequestId } : {}),
        events: events(value.first, value.iterator, target),
      }
    },

    async close() {
      if (closed || options.dispatcher) return
      closed = true
      if (pool) await (await pool).close()
    },
  }
}
