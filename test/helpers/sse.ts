/**
 * A Server-Sent Events client for tests: opens a stream with fetch, parses it with
 * eventsource-parser, records every event, comment and retry hint, and waits for conditions on
 * them (with a generous timeout: the wait ends as soon as the condition holds).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'

export interface EventStream {
  status: number
  headers: Headers
  /** The JSON body of a refusal (when status is not 200). */
  body: any
  events: EventSourceMessage[]
  comments: string[]
  retry: number | null
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>
  /** Resolves with the events seen once `check` holds for them; rejects after `timeoutMs`. */
  waitFor(check: (events: EventSourceMessage[]) => boolean, what: string, timeoutMs?: number): Promise<EventSourceMessage[]>
  /** The notification events' parsed data. */
  notifications(): any[]
  /** The unread_count events' counts. */
  unreadCounts(): number[]
  close(): void
}

export async function openEventStream(url: string, options: { token?: string; lastEventId?: string; headers?: Record<string, string> } = {}): Promise<EventStream> {
  const controller = new AbortController()
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId
  const response = await fetch(url, { headers, signal: controller.signal })
  const events: EventSourceMessage[] = []
  const comments: string[] = []
  const waiters = new Set<() => void>()
  const stream: EventStream = {
    status: response.status,
    headers: response.headers,
    body: null,
    events,
    comments,
    retry: null,
    ended: Promise.resolve(),
    waitFor(check, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const attempt = () => {
          if (!check(events)) return
          waiters.delete(attempt)
          clearTimeout(timer)
          resolve(events)
        }
        const timer = setTimeout(() => {
          waiters.delete(attempt)
          reject(new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events.map((e) => [e.event, e.id, e.data]))}`))
        }, timeoutMs)
        waiters.add(attempt)
        attempt()
      })
    },
    notifications: () => events.filter((e) => e.event === 'notification').map((e) => JSON.parse(e.data)),
    unreadCounts: () => events.filter((e) => e.event === 'unread_count').map((e) => JSON.parse(e.data).count),
    close: () => controller.abort(),
  }
  if (response.status !== 200 || !response.body) {
    stream.body = await response.json()
    return stream
  }
  const parser = createParser({
    onEvent: (event) => {
      events.push(event)
      for (const waiter of [...waiters]) waiter()
    },
    onComment: (comment) => {
      comments.push(comment)
      for (const waiter of [...waiters]) waiter()
    },
    onRetry: (ms) => (stream.retry = ms),
  })
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  stream.ended = (async () => {
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }))
    } catch {
      // Aborted by close(), or cut by the server.
    }
  })()
  return stream
}
