/**
 * The one life of every gateway call, whatever its wire format (OpenAI chat completions,
 * Responses, Anthropic Messages, embeddings, audio, moderations): the caller's address rate limit,
 * its key (401 when one is required), the key's checks for the model (`admit`: allow-list, budgets,
 * rpm/tpm), the call itself with the gateway's routing, retries, fallbacks and prices, then its
 * usage and cost counted (`settle`). Each surface only reads its request and writes its answer; the
 * failures are rendered in the surface's own error shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ZodError } from 'zod'
import { ConfigError } from '../config.js'
import { anthropicErrorBody, OPENAI_ERROR_TYPES, toPublicError } from '../errors.js'
import { sendError, sendJson, writeStreamed } from '../http.js'
import type { Exchange } from '../rest/adapter.js'
import { enforceRateLimit } from '../trpc.js'
import { ClientAbortError, GatewayError } from './errors.js'
import type { ChatGateway } from './gateway.js'
import type { GatewayPass } from './keys/access.js'
import type { CallOutcome } from './keys/usage.js'

/** How failures are answered: OpenAI's `{error}`, Plaza's envelope, or Anthropic's `{type: "error", error}`. */
export type ErrorStyle = 'openai' | 'envelope' | 'anthropic'

/** Which gateway serves an operation: the chat gateway, or the second (`inference`) upstream. */
export type Upstream = 'chat' | 'inference'

interface ClientError {
  status: number
  message: string
  type: string
  code: string
  param: string | null
  retryAfter?: number
  headers?: Record<string, string>
  unexpected: boolean
}

/** By class name as well: under a CJS test runner the module can be loaded twice, with two classes. */
function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError || (error instanceof Error && error.constructor.name === 'ConfigError')
}

/** What a failure tells the client: status, message, OpenAI's type/code/param, and the headers it carries. */
export function describeFailure(error: unknown): ClientError {
  if (error instanceof GatewayError) {
    return { status: error.status, message: error.message, type: error.type, code: error.code, param: error.param, retryAfter: error.retryAfter, headers: error.headers, unexpected: false }
  }
  // An invalid PLAZA_LLM_* configuration found at the first chat request (`plaza serve` refuses to start with one).
  if (isConfigError(error)) return { status: 503, message: `The chat configuration is invalid: ${error.message}`, type: 'service_unavailable', code: 'provider_not_configured', param: null, unexpected: false }
  const failure = toPublicError(error)
  const [type, code] = OPENAI_ERROR_TYPES[failure.status] ?? ['server_error', 'server_error']
  const zod = error instanceof ZodError ? error : undefined
  const param = zod?.issues[0]?.path.length ? String(zod.issues[0].path[0]) : null
  return { status: failure.status, message: failure.message, type, code, param, retryAfter: failure.retryAfter, unexpected: failure.unexpected }
}

/** Anthropic's error body for a failure (also the data of its mid-stream `error` event). */
export function anthropicError(failure: Pick<ClientError, 'status' | 'message'>) {
  return anthropicErrorBody(failure.status, failure.message)
}

/** Answers a failure in the style of the operation; after the headers have gone, only the connection can be closed. */
export function sendGatewayError(exchange: Pick<Exchange, 'req' | 'res' | 'ctx'>, style: ErrorStyle, error: unknown) {
  const { res, req, ctx } = exchange
  const failure = describeFailure(error)
  if (failure.unexpected) ctx.services.logger.error('chat request failed', { url: req.url, error: String((error as Error)?.stack ?? error) })
  if (res.headersSent) return void res.destroy()
  const headers: Record<string, string> = { ...failure.headers, ...(failure.retryAfter ? { 'retry-after': String(failure.retryAfter) } : {}) }
  if (failure.status === 401) headers['www-authenticate'] = 'Bearer'
  if (style === 'openai') sendJson(res, failure.status, { error: { message: failure.message, type: failure.type, code: failure.code, param: failure.param } }, headers)
  else if (style === 'anthropic') sendJson(res, failure.status, anthropicError(failure), headers)
  else sendError(res, failure.status, failure.message, headers, ctx.services.clock())
}

/** The key a client presents: `Authorization: Bearer` (OpenAI's clients), else `x-api-key` (Anthropic's). */
function presentedKey(ctx: Exchange['ctx'], req?: IncomingMessage): string | null {
  if (ctx.token) return ctx.token
  const header = req?.headers['x-api-key']
  const key = Array.isArray(header) ? header[0] : header
  return key?.trim() || null
}

/**
 * The one gate of every gateway operation: the caller's address rate limit, then its key (401 when
 * the gateway requires one and this is none). The pass then admits each call and counts its usage.
 */
export async function authorizeGatewayCall(ctx: Exchange['ctx'], req?: IncomingMessage): Promise<GatewayPass> {
  await enforceRateLimit(ctx, 'default', `ip:${ctx.clientAddress}`)
  return (await ctx.services.gatewayAccess()).authorize(presentedKey(ctx, req))
}

/** The upstream's own request id, echoed so that a failure can be traced at the provider. */
export function upstreamHeaders(provider: string, upstreamRequestId: string | undefined): Record<string, string> {
  return { 'x-plaza-provider': provider, ...(upstreamRequestId ? { 'x-upstream-request-id': upstreamRequestId } : {}) }
}

/** The headers of a Server-Sent Events answer. */
export const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

/** Writes one SSE event (with its name when given), waiting when the client reads slower than the model writes. */
export function writeEvent(res: ServerResponse, data: string, event?: string): Promise<void> {
  return writeStreamed(res, event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`)
}

/** What an admitted call needs: the gateway, the client's abort, the key's x-ratelimit-* headers for the answer. */
export interface CallContext {
  exchange: Exchange
  gateway: ChatGateway
  pass: GatewayPass
  signal: AbortSignal
  /** To send with the answer (the key's x-ratelimit-* headers). */
  headers: Record<string, string>
}

/** What a call ended with: its usage and cost for the key, and (for an answer not yet sent) how to send it. */
export interface CallResult extends CallOutcome {
  /** Sends the answer once the call has been counted (a streamed call has already answered). */
  respond?: () => Promise<void> | void
}

/** A gateway call as a surface reads it: the model name the key's checks apply to, and how to run it. */
export interface GatewayCall {
  model: string
  run(context: CallContext): Promise<CallResult>
  /** Frees what reading the call took (a spooled upload), however the call ends. */
  release?(): Promise<void>
}

/** Builds the handler of one gateway operation from how it reads its call (after the gateway's gate has let the caller in). */
export function gatewayHandler(read: (exchange: Exchange, pass: GatewayPass) => Promise<GatewayCall>, style: ErrorStyle, upstream: Upstream = 'chat') {
  return async (exchange: Exchange) => {
    const { res, req, ctx } = exchange
    // The client going away aborts the upstream call (and stops paying for tokens nobody reads).
    const controller = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    let admitted: { pass: GatewayPass; model: string } | undefined
    let call: GatewayCall | undefined
    try {
      const pass = await authorizeGatewayCall(ctx, req)
      call = await read(exchange, pass)
      const headers = await pass.admit(call.model)
      admitted = { pass, model: call.model }
      const gateway = await ctx.services[upstream]()
      const { respond, ...outcome } = await call.run({ exchange, gateway, pass, signal: controller.signal, headers })
      admitted = undefined
      pass.settle(call.model, outcome)
      await respond?.()
    } catch (error) {
      // An admitted call that failed before answering still counts, as a request and an error (a client that left is no error).
      admitted?.pass.settle(admitted.model, { failed: !(error instanceof ClientAbortError) })
      if (error instanceof ClientAbortError) return void res.destroy()
      sendGatewayError(exchange, style, error)
    } finally {
      await call?.release?.()
    }
  }
}
