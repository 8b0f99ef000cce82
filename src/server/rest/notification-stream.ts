/**
 * GET /notifications/stream: the caller's notifications as Server-Sent Events, fed by the process's
 * notification feed (domain/notification-feed.ts). Every refusal (401, 400, 429) is the usual JSON
 * envelope, answered before the stream starts; after that the answer is `text/event-stream` until
 * the client leaves or the server closes.
 */
import type { ServerResponse } from 'node:http'
import { TRPCError } from '@trpc/server'
import { z } from 'zod'
import type { FeedEvent, FeedSink } from '../domain/notification-feed.js'
import type { ErrorCases } from '../errors.js'
import { requireSession } from '../trpc.js'
import type { Exchange, HandlerRoute } from './adapter.js'

/** One event in SSE framing; a notification carries its id, which a reconnecting client sends back as Last-Event-ID. */
export function formatEvent(event: FeedEvent): string {
  switch (event.type) {
    case 'notification':
      return `id: ${event.notification.id}\nevent: notification\ndata: ${JSON.stringify(event.notification)}\n\n`
    case 'unread_count':
      return `event: unread_count\ndata: ${JSON.stringify({ count: event.count })}\n\n`
    case 'heartbeat':
      return ': heartbeat\n\n'
  }
}

/** The stream's query, for the OpenAPI document (resumeAfter reads it, and the header first). */
export const notificationStreamInput = z.object({
  last_event_id: z
    .string()
    .regex(/^\d{1,16}$/)
    .optional()
    .describe('Resume after this notification id (the `Last-Event-ID` header, as EventSource sends it on reconnect, does the same and wins)'),
})

/** What the stream answers before it opens, beyond a missing token (ErrorCases in errors.ts). */
export const NOTIFICATION_STREAM_ERRORS: ErrorCases = {
  400: '`Last-Event-ID` (or `last_event_id`) is not a notification id',
  429: 'Too many notification streams are open, for the account or on the server',
  503: 'The server is shutting down; reconnect in a moment',
}

/**
 * Where to resume: the `Last-Event-ID` header (what EventSource sends on reconnect), else the
 * `last_event_id` query parameter (for clients that cannot set headers); undefined when neither is
 * given (an empty value, as EventSource may send, counts as none).
 */
function resumeAfter({ req, query }: Pick<Exchange, 'req' | 'query'>): number | undefined {
  const header = req.headers['last-event-id']
  const value = (Array.isArray(header) ? header[0] : header)?.trim() || query.last_event_id?.trim()
  if (!value) return undefined
  const id = Number(value)
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(id)) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'Last-Event-ID (or last_event_id) must be a notification id: a whole number from 0' })
  }
  return id
}

function responseSink(res: ServerResponse): FeedSink {
  return {
    send: (event) => res.write(formatEvent(event)),
    onDrain: (listener) => void res.once('drain', listener),
    // A full buffer would never flush to a client that stopped reading, and close() would wait on it.
    end: () => (res.writableNeedDrain ? res.destroy() : res.end()),
  }
}

/** The handler of `GET /notifications/stream` in the route table. */
export const handleNotificationStream: HandlerRoute['handle'] = async ({ req, res, ctx, query }) => {
  const session = await requireSession(ctx)
  const after = resumeAfter({ req, query })
  const { notificationFeed, config } = ctx.services
  const stream = notificationFeed.subscribe(session.user.id, responseSink(res))
  res.once('close', () => stream.close())
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    // nginx would otherwise buffer the events.
    'x-accel-buffering': 'no',
  })
  // Sends the headers now, so the client knows the stream is open before the first event.
  res.write(`retry: ${config.streams.retryMs}\n\n`)
  try {
    await stream.start(after)
  } catch (error) {
    stream.close()
    res.destroy()
    ctx.services.logger.error('notification stream failed to start', { error: String((error as Error)?.cause ?? error) })
  }
}
