/**
 * The three chat operations over HTTP (handler routes: a stream needs the raw response).
 * Bodies follow OpenAI's chat.completion / chat.completion.chunk so OpenAI's clients work on
 * /api/v1, plus Plaza's `message`, `reasoning` and `answer`. Errors on /api/v1 are OpenAI's
 * `{error: {message, type, code, param}}`; on /api/chaty and /api/reasoning-70b the envelope.
 */
import type { ServerResponse } from 'node:http'
import type { z } from 'zod'
import { ZodError } from 'zod'
import { chatCompletionInput, chatOperationInput, chatQueryInput, coderInput, conversationInput, paramsOf, type ChatMessage, type ChatOperation, type GatewayAlias } from '../../shared/schemas/chat.js'
import { ConfigError } from '../config.js'
import { OPENAI_ERROR_TYPES, toPublicError } from '../errors.js'
import { readJson, sendError, sendJson, writeStreamed } from '../http.js'
import type { Exchange } from '../rest/adapter.js'
import { enforceRateLimit } from '../trpc.js'
import { ClientAbortError, GatewayError } from './errors.js'
import { completionBody } from './format.js'
import { conversationStore } from './conversations.js'
import type { ChatRequest, ChatResult, ChatStream } from './gateway.js'
import type { GatewayPass } from './keys/access.js'
import type { CallOutcome } from './keys/usage.js'

/** Long conversations are allowed; 4 MiB is far beyond any model's context. */
const CHAT_BODY_LIMIT = 4 * 1024 * 1024

type ErrorStyle = 'openai' | 'envelope'

interface ClientError {
  status: number
  message: string
  type: string
  code: string
  param: string | null
  retryAfter?: number
  unexpected: boolean
}

/** By class name as well: under a CJS test runner the module can be loaded twice, with two classes. */
function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError || (error instanceof Error && error.constructor.name === 'ConfigError')
}

function describe(error: unknown): ClientError {
  if (error instanceof GatewayError) return { status: error.status, message: error.message, type: error.type, code: error.code, param: error.param, retryAfter: error.retryAfter, unexpected: false }
  // An invalid PLAZA_LLM_* configuration found at the first chat request (`plaza serve` refuses to start with one).
  if (isConfigError(error)) return { status: 503, message: `The chat configuration is invalid: ${error.message}`, type: 'service_unavailable', code: 'provider_not_configured', param: null, unexpected: false }
  const failure = toPublicError(error)
  const [type, code] = OPENAI_ERROR_TYPES[failure.status] ?? ['server_error', 'server_error']
  const zod = error instanceof ZodError ? error : undefined
  const param = zod?.issues[0]?.path.length ? String(zod.issues[0].path[0]) : null
  return { status: failure.status, message: failure.message, type, code, param, retryAfter: failure.retryAfter, unexpected: failure.unexpected }
}

export function sendChatError(exchange: Exchange, style: ErrorStyle, error: unknown) {
  const { res, req, ctx } = exchange
  const failure = describe(error)
  if (failure.unexpected) ctx.services.logger.error('chat request failed', { url: req.url, error: String((error as Error)?.stack ?? error) })
  if (res.headersSent) return void res.destroy()
  const headers: Record<string, string> = failure.retryAfter ? { 'retry-after': String(failure.retryAfter) } : {}
  if (failure.status === 401) headers['www-authenticate'] = 'Bearer'
  if (style === 'openai') sendJson(res, failure.status, { error: { message: failure.message, type: failure.type, code: failure.code, param: failure.param } }, headers)
  else sendError(res, failure.status, failure.message, headers, ctx.services.clock())
}

/** Writes one SSE event, waiting when the client reads slower than the model writes. */
function writeEvent(res: ServerResponse, data: string): Promise<void> {
  return writeStreamed(res, `data: ${data}\n\n`)
}

/** The upstream's own request id, echoed so that a failure can be traced at the provider. */
function upstreamHeaders(provider: string, upstreamRequestId: string | undefined): Record<string, string> {
  return { 'x-plaza-provider': provider, ...(upstreamRequestId ? { 'x-upstream-request-id': upstreamRequestId } : {}) }
}

/**
 * The one gate of every gateway operation: the caller's address rate limit, then its key (401 when
 * the gateway requires one and this is none). The pass then admits each call and counts its usage.
 */
export async function authorizeGatewayCall(ctx: Exchange['ctx']): Promise<GatewayPass> {
  await enforceRateLimit(ctx, 'default', `ip:${ctx.clientAddress}`)
  return (await ctx.services.gatewayAccess()).authorize(ctx.token)
}

/** Streams the answer; resolves with what the call used, for the key's usage (the last chunk carries it). */
async function sendStream(res: ServerResponse, stream: ChatStream): Promise<CallOutcome> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...upstreamHeaders(stream.provider, stream.upstreamRequestId),
  })
  const chunk = (index: number, delta: Record<string, unknown>, finishReason: string | null = null, logprobs: unknown = null, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id: stream.id, object: 'chat.completion.chunk', created: stream.created, model: stream.model, choices: [{ index, delta, logprobs, finish_reason: finishReason }], ...extra })
  // Each choice opens with its role, as OpenAI's streams do.
  const opened = new Set<number>([0])
  const outcome: CallOutcome = { failed: false }
  await writeEvent(res, chunk(0, { role: 'assistant', content: '' }))
  try {
    for await (const event of stream.events) {
      if (res.destroyed) return outcome
      if (event.type === 'delta') {
        if (!opened.has(event.index)) {
          opened.add(event.index)
          await writeEvent(res, chunk(event.index, { role: 'assistant', content: '' }))
        }
        const delta = {
          ...(event.reasoning ? { reasoning_content: event.reasoning } : {}),
          ...(event.content ? { content: event.content } : {}),
          ...(event.toolCalls ? { tool_calls: event.toolCalls } : {}),
          ...(event.refusal ? { refusal: event.refusal } : {}),
        }
        await writeEvent(res, chunk(event.index, delta, null, event.logprobs ?? null))
      } else {
        // Usage rides on the last chunk, whether or not the client asked for it (stream_options.include_usage).
        outcome.usage = event.usage
        const last = event.finishReasons.length - 1
        for (const [position, { index, finishReason }] of event.finishReasons.entries()) {
          await writeEvent(res, chunk(index, {}, finishReason, null, position === last ? { usage: event.usage ?? null } : {}))
        }
      }
    }
    await writeEvent(res, '[DONE]')
  } catch (error) {
    if (error instanceof ClientAbortError || res.destroyed) return outcome
    outcome.failed = true
    // Headers are gone: the failure travels as an OpenAI error event (OpenAI's client throws on it; the
    // same shape on every operation, as an envelope means nothing inside a stream) and no [DONE] follows.
    const failure = describe(error)
    await writeEvent(res, JSON.stringify({ error: { message: failure.message, type: failure.type, code: failure.code, param: null } }))
  }
  res.end()
  return outcome
}

/** Which gateway serves an operation: the chat gateway, or the second (`inference`) upstream. */
type Upstream = 'chat' | 'inference'

/** A chat call as an operation reads it: the request, and (for a non-streamed call) how to answer. */
interface ChatCall {
  request: ChatRequest & { stream: boolean }
  /** Answers a finished, non-streamed call; by default OpenAI's chat.completion plus message, reasoning and answer. */
  answer?: (result: ChatResult) => Promise<void> | void
}

/** Builds the handler of one chat operation from how it reads its call (after the gateway's gate has let the caller in). */
function chatHandler(read: (exchange: Exchange, pass: GatewayPass) => Promise<ChatCall>, style: ErrorStyle, upstream: Upstream = 'chat') {
  return async (exchange: Exchange) => {
    const { res, ctx } = exchange
    // The client going away aborts the upstream call (and stops paying for tokens nobody reads).
    const controller = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) controller.abort()
    })
    let admitted: { pass: GatewayPass; model: string } | undefined
    try {
      const pass = await authorizeGatewayCall(ctx)
      const { request, answer } = await read(exchange, pass)
      await pass.admit(request.model)
      admitted = { pass, model: request.model }
      const gateway = await ctx.services[upstream]()
      if (request.stream) {
        const stream = await gateway.stream(request, controller.signal)
        const outcome = await sendStream(res, stream)
        admitted = undefined
        pass.settle(request.model, outcome)
      } else {
        const result = await gateway.complete(request, controller.signal)
        admitted = undefined
        pass.settle(request.model, { usage: result.usage, failed: false })
        if (answer) await answer(result)
        else sendJson(res, 200, completionBody(result), upstreamHeaders(result.provider, result.upstreamRequestId))
      }
    } catch (error) {
      // An admitted call that failed before answering still counts, as a request and an error (a client that left is no error).
      admitted?.pass.settle(admitted.model, { failed: !(error instanceof ClientAbortError) })
      if (error instanceof ClientAbortError) return void res.destroy()
      sendChatError(exchange, style, error)
    }
  }
}

/** A handler whose call is the JSON body, parsed. */
const bodyHandler = (parse: (body: unknown) => ChatRequest & { stream: boolean }, style: ErrorStyle, upstream: Upstream = 'chat') =>
  chatHandler(async ({ req }) => ({ request: parse(await readJson(req, CHAT_BODY_LIMIT)) }), style, upstream)

function toRequest(model: string, input: z.output<typeof chatOperationInput>): ChatRequest & { stream: boolean } {
  return { model, messages: input.messages, params: paramsOf(input), stream: input.stream ?? false }
}

/** POST /api/v1/chat/completions */
export const handleChatCompletions = bodyHandler((body) => {
  const input = chatCompletionInput.parse(body)
  return toRequest(input.model, input)
}, 'openai')

/** POST /api/inference/chat/completions: OpenAI's request, to the second upstream (`PLAZA_INFERENCE_*`). */
export const handleInferenceCompletions = bodyHandler((body) => {
  const input = chatCompletionInput.parse(body)
  return toRequest(input.model, input)
}, 'openai', 'inference')

/** POST /api/chaty, /api/reasoning-70b, /api/copilot and /api/llama-70b: the operation names the model. */
export function handleChatOperation(operation: ChatOperation | GatewayAlias) {
  return bodyHandler((body) => toRequest(operation, chatOperationInput.parse(body)), 'envelope')
}

/** The messages of a one-line question: an optional system message, then the user's. */
function question(content: string, system?: string): ChatMessage[] {
  const user: ChatMessage = { role: 'user', content }
  return system ? [{ role: 'system', content: system }, user] : [user]
}

/** GET /api/reasoning-small and /api/gpt: `?content=` (and `system=`), answered like the POST operations. */
export function handleChatQuery(alias: GatewayAlias) {
  return chatHandler(async ({ query }) => {
    const input = chatQueryInput.parse(query)
    return { request: { model: alias, messages: question(input.content, input.system), params: {}, stream: false } }
  }, 'envelope')
}

/** GET /api/coder: `?prompt=&maxTokens=`, answered as plain text (the answer without its reasoning), as the original does. */
export const handleCoder = chatHandler(async ({ query, res }) => {
  const input = coderInput.parse(query)
  return {
    request: { model: 'coder', messages: question(input.prompt), params: input.maxTokens ? { max_tokens: input.maxTokens } : {}, stream: false },
    answer: (result) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', ...upstreamHeaders(result.provider, result.upstreamRequestId) })
      res.end(result.answer)
    },
  }
}, 'envelope')

/** GET and POST /api/chat: one message of a conversation the server keeps (chat/conversations.ts). */
export const handleConversation = chatHandler(async ({ req, res, query, ctx }, pass) => {
  const input = conversationInput.parse(req.method === 'GET' ? query : await readJson(req, CHAT_BODY_LIMIT))
  const conversations = conversationStore(ctx.services)
  const turn = await conversations.open(input, pass.key?.id ?? null)
  return {
    request: { model: 'chat', messages: turn.messages, params: {}, stream: false },
    answer: async (result) => {
      await conversations.record(turn, result.message)
      sendJson(res, 200, { ...completionBody(result), conversationId: turn.id }, upstreamHeaders(result.provider, result.upstreamRequestId))
    },
  }
}, 'envelope')

/** One model as OpenAI's models API lists it. */
function modelObject(model: { id: string; provider: string }, created: number) {
  return { id: model.id, object: 'model' as const, created, owned_by: model.provider }
}

/** GET /api/v1/models: every name the gateway serves (OpenAI's list shape). */
export async function handleListModels(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx)
    const gateway = await exchange.ctx.services.chat()
    const allowed = gateway.models().filter((model) => pass.allows(model.id))
    sendJson(exchange.res, 200, { object: 'list', data: allowed.map((model) => modelObject(model, gateway.createdAt)) })
  } catch (error) {
    sendChatError(exchange, 'openai', error)
  }
}

/** GET /api/v1/models/{id}: one served name, or OpenAI's 404. */
export async function handleGetModel(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx)
    const gateway = await exchange.ctx.services.chat()
    const id = exchange.params.id
    // A name the key may not use is as unknown to it as one nobody serves (OpenAI answers the same 404).
    const model = gateway.models().find((served) => served.id === id && pass.allows(served.id))
    if (!model) throw new GatewayError(404, 'model_not_found', `The model "${id}" is not served here: GET /api/v1/models lists the names that are.`, 'model')
    sendJson(exchange.res, 200, modelObject(model, gateway.createdAt))
  } catch (error) {
    sendChatError(exchange, 'openai', error)
  }
}

/** GET /api/chat/providers: the configured chat providers, by name and protocol (never a key or a URL). */
export async function handleChatProviders(exchange: Exchange): Promise<void> {
  try {
    await authorizeGatewayCall(exchange.ctx)
    const [chat, inference] = await Promise.all([exchange.ctx.services.chat(), exchange.ctx.services.inference()])
    const providers = [...chat.describe().providers, ...inference.describe().providers.map((provider) => ({ ...provider, serves: '/api/inference/chat/completions' }))]
    sendJson(exchange.res, 200, { message: `${providers.length} chat provider${providers.length === 1 ? '' : 's'} configured`, providers })
  } catch (error) {
    sendChatError(exchange, 'envelope', error)
  }
}

/** GET /api/chat/models: every name the gateway serves (that the caller's key may use), with its upstream targets in order. */
export async function handleChatModels(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx)
    const gateway = await exchange.ctx.services.chat()
    const models = gateway.describe().models.filter((model) => pass.allows(model.id))
    sendJson(exchange.res, 200, { message: `${models.length} model name${models.length === 1 ? '' : 's'} served`, models })
  } catch (error) {
    sendChatError(exchange, 'envelope', error)
  }
}
