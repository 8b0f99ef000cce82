/**
 * The HTTP part shared by every provider (chat and the catalog's): one request with undici, a
 * timeout that covers the wait for the answer and every silence between chunks, the client's abort
 * passed through, bodies read up to a bound, and failures sorted into timeout / dropped connection /
 * HTTP status with the upstream's own message.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { Dispatcher, FormData } from 'undici'
import { ClientAbortError, UpstreamError } from './errors.js'

/** What a request sends: JSON, a multipart form, raw bytes, or nothing (GET). */
export type UpstreamBody = { json: unknown } | { form: FormData } | { bytes: Buffer; type: string } | undefined

export interface RequestOptions {
  url: string
  method?: 'GET' | 'POST' | 'DELETE'
  headers: Record<string, string>
  body?: UpstreamBody
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
  /** The declared Content-Type (callers sniff bytes anyway). */
  contentType: string
  /** The body as JSON, at most `maxBytes` of it (default 64 MiB). */
  json(maxBytes?: number): Promise<any>
  /** The body's bytes, at most `maxBytes`. */
  bytes(maxBytes: number): Promise<Buffer>
  /** Server-Sent Events of the body, in order. */
  events(): AsyncIterable<EventSourceMessage>
  /**
   * The body's chunks as they arrive (audio streamed on to a client): the timeout covers every
   * silence between chunks; more than `maxBytes` in all fails. Stopping early releases the connection.
   */
  chunks(maxBytes: number): AsyncIterable<Buffer>
}

const DEFAULT_JSON_LIMIT = 64 * 1024 * 1024
/** An error body is read for its message only. */
const ERROR_BODY_LIMIT = 64 * 1024

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000)
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * undici's `request`, loaded on the first upstream call rather than at the top, so that importing
 * the provider modules does not load undici. The promise is kept: a dynamic `import()` per call
 * costs a module resolution each time (about a millisecond under a loader hook such as tsx's).
 */
let undici: Promise<typeof import('undici')['request']> | undefined
const undiciRequest = () => (undici ??= import('undici').then((module) => module.request))

/** The message an upstream put in its error body (OpenAI, Anthropic, vLLM, Ollama, Hugging Face, remove.bg shapes), else its text. */
export function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text)
    const candidate =
      body?.error?.message ??
      (typeof body?.error === 'string' ? body.error : undefined) ??
      body?.errors?.[0]?.title ??
      body?.message ??
      // ElevenLabs: `{detail: {status, message}}`.
      body?.detail?.message ??
      body?.detail ??
      body?.reason
    if (typeof candidate === 'string' && candidate.trim()) return candidate.trim().slice(0, 500)
  } catch {
    // not JSON: fall through to the text itself
  }
  // Only printable text: an error body may be binary.
  return text.replace(/[^\x20-\x7e\u00a0-\uffff]+/g, ' ').trim().slice(0, 300) || 'no message'
}

/** Hugging Face's hosted inference answers a model still loading with 503 and `{estimated_time: seconds}` instead of Retry-After. */
function estimatedTime(text: string): number | undefined {
  try {
    const seconds = JSON.parse(text)?.estimated_time
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : undefined
  } catch {
    return undefined
  }
}

/** Reads a body to its end, failing once more than `limit` bytes have arrived. */
async function readBounded(body: Dispatcher.ResponseData['body'], limit: number, label: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of body) {
    total += (chunk as Buffer).length
    if (total > limit) {
      body.destroy()
      throw new UpstreamError('protocol', `${label} answered more than ${Math.round(limit / 1024 / 1024) || 1} MiB`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

function encodeBody(body: UpstreamBody): { body?: Dispatcher.DispatchOptions['body'] | FormData; type?: string } {
  if (!body) return {}
  if ('json' in body) return { body: JSON.stringify(body.json), type: 'application/json' }
  if ('bytes' in body) return { body: body.bytes, type: body.type }
  // undici sets the multipart boundary itself.
  return { body: body.form }
}

/** One request to an upstream; a non-2xx answer is thrown as an UpstreamError carrying its status and Retry-After. */
export async function requestUpstream(options: RequestOptions): Promise<UpstreamResponse> {
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
  const encoded = encodeBody(options.body)
  arm()
  let response: Dispatcher.ResponseData
  try {
    response = await request(options.url, {
      method: options.method ?? 'POST',
      headers: { ...(encoded.type ? { 'content-type': encoded.type } : {}), ...options.headers },
      body: encoded.body as Dispatcher.DispatchOptions['body'],
      signal: controller.signal,
      dispatcher: options.dispatcher,
    })
  } catch (error) {
    throw classify(error)
  }

  if (response.statusCode < 200 || response.statusCode > 299) {
    let text = ''
    try {
      text = (await readBounded(response.body, ERROR_BODY_LIMIT, options.label).catch((error) => {
        if (error instanceof UpstreamError && error.kind === 'protocol') return Buffer.from('(a long error body)')
        throw error
      })).toString('utf8')
    } catch (error) {
      throw classify(error)
    }
    finish()
    throw new UpstreamError('http', `${options.label} answered ${response.statusCode}: ${upstreamMessage(text)}`, {
      status: response.statusCode,
      retryAfterMs: parseRetryAfter(response.headers['retry-after']) ?? estimatedTime(text),
    })
  }

  const body = response.body
  const requestId = response.headers['x-request-id'] ?? response.headers['request-id']
  const contentType = response.headers['content-type']
  const readAll = async (limit: number): Promise<Buffer> => {
    try {
      const bytes = await readBounded(body, limit, options.label)
      finish()
      return bytes
    } catch (error) {
      throw classify(error)
    }
  }
  return {
    requestId: typeof requestId === 'string' && /^[\w.:-]{1,128}$/.test(requestId) ? requestId : undefined,
    contentType: typeof contentType === 'string' ? contentType : '',
    async json(maxBytes = DEFAULT_JSON_LIMIT) {
      const text = (await readAll(maxBytes)).toString('utf8')
      try {
        return JSON.parse(text)
      } catch {
        throw new UpstreamError('protocol', `${options.label} answered with something that is not JSON`)
      }
    },
    bytes: readAll,
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
    async *chunks(maxBytes) {
      let total = 0
      try {
        arm()
        for await (const chunk of body) {
          arm()
          total += (chunk as Buffer).length
          if (total > maxBytes) throw new UpstreamError('protocol', `${options.label} answered more than ${Math.round(maxBytes / 1024 / 1024) || 1} MiB`)
          // A slow client is not the upstream's silence: no timer while the chunk is being passed on.
          clearTimeout(timer)
          yield chunk as Buffer
          arm()
        }
        finish()
      } catch (error) {
        throw classify(error)
      } finally {
        if (!body.destroyed && !body.readableEnded) body.destroy()
        finish()
      }
    },
  }
}
