/**
 * The provider layer: resolves a service to its ordered targets and calls them with retries (429,
 * 5xx, dropped connections; Retry-After honoured up to a cap, past it the next target) and then
 * the fallbacks. What fails everywhere becomes one ProviderError (502, or 504 when the last failure
 * was a timeout), every key scrubbed from its message and from the log.
 */
import type { Dispatcher } from 'undici'
import type { Logger } from '../logger.js'
import type { UpstreamOutcome } from '../metrics/recorder.js'
import { howToConfigure, type ProvidersConfig, type ServiceName, type ServiceTarget } from './config.js'
import { ClientAbortError, ProviderError, redact, UpstreamError } from './errors.js'
import { requestUpstream, type RequestOptions, type UpstreamResponse } from './http.js'

/** What an attempt gets: the target, and a request function bound to the layer's pool, the target's timeout and the caller's abort. */
export interface Attempt {
  target: ServiceTarget
  request(options: Omit<RequestOptions, 'timeoutMs' | 'signal' | 'dispatcher' | 'label'> & { timeoutMs?: number }): Promise<UpstreamResponse>
  /** Names the target in messages: `images provider env (automatic1111)`. */
  label: string
  signal: AbortSignal
}

export interface ProviderLayer {
  readonly config: ProvidersConfig
  /** Whether a service has at least one target. */
  configured(service: ServiceName): boolean
  /** Throws the 503 of an unconfigured service (before any work is done for it). */
  require(service: ServiceName): void
  /** Runs `attempt` over the service's targets in order with retries; the first success wins. Throws ProviderError (503 when unconfigured). */
  call<T>(service: ServiceName, attempt: (call: Attempt) => Promise<T>, signal?: AbortSignal): Promise<{ value: T; target: ServiceTarget }>
  /** Scrubs every configured key from `text`. */
  redact(text: string): string
  close(): Promise<void>
}

export interface LayerOptions {
  logger?: Logger
  /** Injected so that tests of backoff and Retry-After do not wait. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  random?: () => number
  dispatcher?: Dispatcher
  /** Told of every call to a provider (each retry and fallback is one), by `<service>/<target>`; never a key. */
  onUpstreamCall?: (provider: string, outcome: UpstreamOutcome) => void
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
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
export function outcomeOf(error: UpstreamError): UpstreamOutcome {
  return error.kind === 'http' && error.status !== undefined ? `http_${error.status}` : error.kind === 'http' ? 'protocol' : error.kind
}

/** The wait before retry `attempt` (from 0), or null to move on: Retry-After when given and within the cap, else jittered exponential backoff. */
export function retryDelay(policy: ProvidersConfig['retry'], attempt: number, error: UpstreamError, random: () => number): number | null {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs <= policy.maxDelayMs ? error.retryAfterMs : null
  const exponential = policy.baseDelayMs * 2 ** attempt
  return Math.min(policy.maxDelayMs, Math.round(exponential * (0.5 + random() / 2)))
}

export function createProviderLayer(config: ProvidersConfig, options: LayerOptions = {}): ProviderLayer {
  const { logger } = options
  const sleep = options.sleep ?? abortableSleep
  const random = options.random ?? Math.random
  let closed = false
  // One keep-alive pool for every provider call; timeouts are the layer's own (http.ts). Made at the first call.
  let pool: Promise<Dispatcher> | undefined
  const dispatcher = (): Promise<Dispatcher> => {
    if (options.dispatcher) return Promise.resolve(options.dispatcher)
    if (closed) return Promise.reject(new Error('the provider layer is closed'))
    return (pool ??= import('undici').then(({ Agent }) => new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000, connect: { timeout: 10_000 } })))
  }
  const scrub = (text: string) => redact(text, config.secrets)

  return {
    config,
    configured: (service) => (config.services.get(service)?.length ?? 0) > 0,
    redact: scrub,
    require(service) {
      if (!config.services.get(service)?.length) throw new ProviderError(503, howToConfigure(service))
    },

    async call(service, attempt, signal = new AbortController().signal) {
      const targets = config.services.get(service)
      if (!targets?.length) throw new ProviderError(503, howToConfigure(service))
      const upstream = await dispatcher()
      let last: UpstreamError | undefined
      for (const target of targets) {
        const label = `${service} provider ${target.name} (${target.protocol})`
        const call: Attempt = {
          target,
          label,
          signal,
          request: (request) => requestUpstream({ ...request, timeoutMs: request.timeoutMs ?? target.timeoutMs, signal, dispatcher: upstream, label }),
        }
        for (let retry = 0; ; retry++) {
          try {
            const value = await attempt(call)
            options.onUpstreamCall?.(`${service}/${target.name}`, 'ok')
            return { value, target }
          } catch (error) {
            if (!(error instanceof UpstreamError)) throw error
            options.onUpstreamCall?.(`${service}/${target.name}`, outcomeOf(error))
            last = error
            const delay = error.retryable && retry < config.retry.maxRetries ? retryDelay(config.retry, retry, error, random) : null
            logger?.info('provider call failed', { service, provider: target.name, protocol: target.protocol, attempt: retry + 1, kind: error.kind, status: error.status, message: scrub(error.message), next: delay === null ? 'fallback' : `retry in ${delay} ms` })
            if (delay === null) break
            await sleep(delay, signal)
          }
        }
      }
      const tried = targets.length > 1 ? ` (tried ${targets.length} providers)` : ''
      const message = scrub(`${last!.message}${tried}`)
      throw new ProviderError(last!.kind === 'timeout' ? 504 : 502, message)
    },

    async close() {
      if (closed || options.dispatcher) return
      closed = true
      if (pool) await (await pool).close()
    },
  }
}

/**
 * The services' provider layer, for a handler: an invalid configuration (found at the first use by
 * an embedded command; `plaza serve` refuses to start with one) answers 503 saying what is wrong.
 */
export async function providerLayerOf(services: { providers(): Promise<ProviderLayer> }): Promise<ProviderLayer> {
  try {
    return await services.providers()
  } catch (error) {
    if (error instanceof Error && error.constructor.name === 'ConfigError') throw new ProviderError(503, `The provider configuration is invalid: ${error.message}`)
    throw error
  }
}
