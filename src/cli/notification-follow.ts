/**
 * `plaza social notifications --follow`: notifications as they arrive. Remote: a streaming GET of
 * `<url>/api/mobile/notifications/stream` with undici, read with eventsource-parser, reconnecting
 * with Last-Event-ID (so nothing is lost or repeated) after the connection drops. Embedded: the
 * server's own notification feed on the same services, polling the same database, no server.
 */
import type { Notification } from '../shared/types.js'
import { NeedsLoginError } from './base.js'
import { remoteFetch, type PlazaClient } from './client.js'

export interface FollowHandlers {
  notification(notification: Notification): void
  /** A dropped connection; the next attempt starts in `delayMs`. */
  reconnecting?(delayMs: number, reason: string): void
}

/** The longest wait between two reconnection attempts. */
const MAX_BACKOFF_MS = 30_000
/** Until the server's `retry:` hint arrives. */
const DEFAULT_RETRY_MS = 3000

/** Follows until `signal` aborts; rejects only on what retrying cannot mend (no session, a refusal). */
export function followNotifications(client: PlazaClient, token: string, signal: AbortSignal, handlers: FollowHandlers): Promise<void> {
  return client.services ? followEmbedded(client, token, signal, handlers) : followRemote(client, token, signal, handlers)
}

async function followEmbedded(client: PlazaClient, token: string, signal: AbortSignal, handlers: FollowHandlers): Promise<void> {
  const services = client.services!
  const { requireSession } = await import('../server/trpc.js')
  const origin = services.config.publicUrl ?? `http://${services.config.host}:${services.config.port}`
  const session = await requireSession({ services, token, clientAddress: 'local', origin, userAgent: 'plaza-cli' })
  if (signal.aborted) return
  let ended!: () => void
  const done = new Promise<void>((resolve) => (ended = resolve))
  const stream = services.notificationFeed.subscribe(session.user.id, {
    send(event) {
      if (event.type === 'notification') handlers.notification(event.notification)
      return true
    },
    onDrain() {},
    end: () => ended(),
  })
  // The feed's timers do not hold the process open (a server's socket does that); this does, until Ctrl-C.
  const keepAlive = setInterval(() => {}, 1 << 30)
  const stop = () => ended()
  signal.addEventListener('abort', stop, { once: true })
  try {
    await stream.start()
    await done
  } finally {
    signal.removeEventListener('abort', stop)
    clearInterval(keepAlive)
    stream.close()
  }
}

/** A refusal that retrying will not change (bad token, bad request): the command fails with it. */
class Refused extends Error {}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

async function followRemote(client: PlazaClient, token: string, signal: AbortSignal, handlers: FollowHandlers): Promise<void> {
  const { createParser } = await import('eventsource-parser')
  const url = `${client.target.kind === 'remote' ? client.target.url : ''}/api/mobile/notifications/stream`
  let lastEventId: string | undefined
  let retryMs = DEFAULT_RETRY_MS
  let failures = 0
  let connectedOnce = false
  while (!signal.aborted) {
    let reason: string
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' }
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
      const response = await remoteFetch(url, { headers, signal })
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => '')
        let message = `HTTP ${response.status}`
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? message
        } catch {}
        if (response.status === 401) throw new NeedsLoginError(`${message} (log in with \`plaza social login\`)`)
        // Too many streams or a server going down: worth waiting for; any other refusal is final.
        if (response.status !== 429 && response.status < 500) throw new Refused(message)
        const retryAfter = Number(response.headers.get('retry-after'))
        if (retryAfter > 0) retryMs = Math.max(retryMs, retryAfter * 1000)
        throw new Error(message)
      }
      connectedOnce = true
      failures = 0
      const parser = createParser({
        onEvent(event) {
          if (event.event !== 'notification') return
          handlers.notification(JSON.parse(event.data) as Notification)
          // Only after it was handled: a reconnection resumes after what was really shown.
          if (event.id) lastEventId = event.id
        },
        onRetry(ms) {
          retryMs = ms
        },
      })
      const decoder = new TextDecoder()
      for await (const chunk of response.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
      reason = 'the server closed the stream'
    } catch (error) {
      if (signal.aborted) return
      if (error instanceof NeedsLoginError || error instanceof Refused) throw error
      const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause
      reason = cause?.code ?? cause?.message ?? (error as Error).message
      // A server that was never reached is a mistake to report, not to wait for.
      if (!connectedOnce) throw new Error(`cannot reach ${client.target.kind === 'remote' ? client.target.url : url}: ${reason}`)
    }
    if (signal.aborted) return
    // The server's hint first, then doubling while attempts keep failing.
    const delay = Math.min(MAX_BACKOFF_MS, retryMs * 2 ** Math.min(failures, 10))
    failures++
    handlers.reconnecting?.(delay, reason)
    await sleep(delay, signal)
  }
}
