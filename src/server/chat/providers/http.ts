/**
 * The HTTP part shared by every provider: one POST with undici, a timeout that covers the wait for
 * the answer and every silence between streamed chunks, the client's abort passed through, and
 * failures sorted into timeout / dropped connection / HTTP status with the upstream's own message.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { Dispatcher } from 'undici'
import { ClientAbortError, UpstreamError } from '../errors.js'

export interface PostOptions {
  url: string
  headers: Record<string, string>
  body: unknown
  timeoutMs: number
  signal: AbortSignal
  dispatcher: Dispatcher
  /** Names the upstream in messages, e.g. `provider "openai" (gpt-4o-mini)`. */
  label: string
}

/** A successful (2xx) upstream answer whose body is read under the same timeout and abort rules. */
export interface UpstreamResponse {
  /** The upstream's id for this request (`x-request-id`, Anthropic's `request-id`), when it gives one. */
  requestId?: string
  json(): Promise<any>
  /** Server-Sent Events of the body, in order. */
  events(): AsyncIterable<EventSourceMessage>
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000)
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * undici's `request`, loaded on the first upstream call rather than at the top, so that importing
 * the chat modules does not load undici. The promise is kept: a dynamic `import()` per call costs
 * a module resolution each time (about a millisecond under a loader hook such as tsx's).
 */
let undici: Promise<typeof import('undici')['request']> | undefined
const undiciRequest = () => (undici ??= import('undici').then((module) => module.request))

/** The message an upstream put in its error body (OpenAI, Anthropic, vLLM and Ollama shapes), else its text. */
function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text)
    const candidate = body?.error?.message ?? (typeof body?.error === 'string' ? body.error : undefined) ?? body?.message ?? body?.detail
    if (typeof candidate === 'string' && candidate.trim()) return candidate.trim().slice(0, 500)
  } catch {
    // not JSON: fall through to the text itself
  }
  return text.trim().slice(0, 300) || 'no message'
}

export async function postUpstream(options: PostOptions): Promise<UpstreamResponse> {
  const controller = new AbortController()
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, options.timeoutMs)
  }
  const onClientAbort = () => controller.abort()
  if (options.signal.aborted) throw new ClientAbortError()
  options.signal.addEventListener('abort', onClientAbort, { once: true })
  const finish = () => {
    clearTimeout(timer)
    options.signal.removeEventListener('abort', onClientAbort)
  }
  const classify = (error: unknown): Error => {
    finish()
    if (options.signal.aborted) return new ClientAbortError()
    if (timedOut) return new UpstreamError('timeout', `${options.label} did not answer within ${options.timeoutMs} ms`)
    if (error instanceof UpstreamError) return error
    const code = (error as { code?: string }).code ?? (error as Error).message
    return new UpstreamError('network', `${options.label} could not be reached or dropped the connection (${code})`)
  }

  const request = await undiciRequest()
  arm()
  let response: Dispatcher.ResponseData
  try {
    response = await request(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body: JSON.stringify(options.body),
      signal: controller.signal,
      dispatcher: options.dispatcher,
    })
  } catch (error) {
    throw classify(error)
  }

  if (response.statusCode < 200 || response.statusCode > 299) {
    let text = ''
    try {
      text = await response.body.text()
    } catch (error) {
      throw classify(error)
    }
    finish()
    throw new UpstreamError('http', `${options.label} answered ${response.statusCode}: ${upstreamMessage(text)}`, {
      status: response.statusCode,
      retryAfterMs: parseRetryAfter(response.headers['retry-after']),
    })
  }

  const body = response.body
  const requestId = response.headers['x-request-id'] ?? response.headers['request-id']
  return {
    requestId: typeof requestId === 'string' && /^[\w.:-]{1,128}$/.test(requestId) ? requestId : undefined,
    async json() {
      try {
        const text = await body.text()
        finish()
        try {
          return JSON.parse(text)
        } catch {
          throw new UpstreamError('protocol', `${options.label} answered with something that is not JSON`)
        }
      } catch (error) {
        throw classify(error)
      }
    },
    async *events() {
      const queue: EventSourceMessage[] = []
      const parser = createParser({ onEvent: (event) => queue.push(event) })
      const decoder = new TextDecoder()
      try {
        arm()
        for await (const chunk of body) {
          arm()
          parser.feed(decoder.decode(chunk as Buffer, { stream: true }))
          while (queue.length > 0) yield queue.shift()!
        }
        parser.feed(decoder.decode())
        while (queue.length > 0) yield queue.shift()!
        finish()
      } catch (error) {
        throw classify(error)
      } finally {
        // Stopped early (the consumer broke off): release the connection.
        if (!body.destroyed && !body.readableEnded) body.destroy()
        finish()
      }
    },
  }
}
