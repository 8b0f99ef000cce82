/**
 * OpenAI's Responses API: `POST /v1/responses` (streamed or not), `GET` and `DELETE
 * /v1/responses/{id}`. A provider that serves the Responses API itself (`responses_api`, on for
 * api.openai.com) gets the request as the client sent it, with its own model name; any other is
 * spoken to in chat completions (responses-translate.ts). Either way the call goes through the
 * gateway's one life (chat/call.ts): keys, budgets, retries, fallbacks, prices, usage.
 */
import type { ChatMessage } from '../../../shared/schemas/chat.js'
import { responseIdInput, responsesInput, type ResponsesInput } from '../../../shared/schemas/gateway-apis.js'
import { readJson, sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import { authorizeGatewayCall, EVENT_STREAM_HEADERS, describeFailure, gatewayHandler, sendGatewayError, upstreamHeaders, writeEvent, type CallContext, type CallResult } from '../call.js'
import { ClientAbortError, GatewayError, UpstreamError } from '../errors.js'
import type { Attempt, ChatRequest } from '../gateway.js'
import { CHAT_BODY_LIMIT } from '../http.js'
import { openaiHeaders } from '../providers/openai.js'
import type { Delta } from '../providers/types.js'
import { responseStore, type StoredResponse } from './responses-store.js'
import { assistantMessage, chatRequestOf, chatUsageOf, itemId, outputOf, responseObject, ResponseEventWriter } from './responses-translate.js'

/** The Responses events that carry the whole response object (its `model` is the name the client asked for). */
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.queued', 'response.completed', 'response.incomplete', 'response.failed'])

const notFound = (id: string, param: string | null = null) =>
  new GatewayError(404, 'response_not_found', `No response with id '${id}': it is unknown, was deleted, expired (responses are kept 24 hours) or was made with another key.`, param)

/** How one call is answered, fixed by what `previous_response_id` points at. */
interface Plan {
  input: ResponsesInput
  keyId: number | null
  previous: StoredResponse | null
  /** The chat translation, made once (and only when a target needs it). */
  translated(): { request: ChatRequest; added: ChatMessage[] }
}

/** Whether this target gets the request as it is: it serves the Responses API, and the conversation is not one Plaza keeps. */
function speaksResponses(plan: Plan, attempt: Attempt): boolean {
  const keeper = plan.previous?.provider ?? null
  if (keeper !== null) {
    if (attempt.target.provider.name !== keeper) {
      throw new GatewayError(400, 'invalid_request', `previous_response_id names a response kept by provider "${keeper}", which does not serve the model "${plan.input.model}" here: continue with a model it serves.`, 'previous_response_id')
    }
    return true
  }
  return plan.previous === null && attempt.target.provider.type === 'openai' && attempt.target.provider.responsesApi
}

/** The request as the provider gets it: the client's fields (unknown ones too), its model name, the stream as asked. */
function nativeRequest(plan: Plan, attempt: Attempt, stream: boolean) {
  const provider = attempt.target.provider
  return attempt.request({
    url: `${provider.baseUrl}/responses`,
    headers: openaiHeaders(provider, stream),
    body: { json: { ...plan.input, model: attempt.target.model, stream } },
  })
}

async function store(context: CallContext, saved: StoredResponse, shouldStore: boolean) {
  if (shouldStore) await responseStore(context.exchange.ctx.services).save(saved)
}

async function answerWhole(plan: Plan, context: CallContext): Promise<CallResult> {
  const { gateway, signal, headers, exchange } = context
  const { value, target } = await gateway.call(plan.input.model, signal, async (attempt) => {
    if (speaksResponses(plan, attempt)) {
      const response = await nativeRequest(plan, attempt, false)
      return { kind: 'native' as const, native: await response.json(), requestId: response.requestId }
    }
    const completion = await attempt.provider.complete(attempt.chatCall(plan.translated().request))
    return { kind: 'chat' as const, chat: completion, requestId: completion.upstreamRequestId }
  })
  if (value.kind === 'native') {
    const body = { ...value.native, model: plan.input.model }
    const usage = chatUsageOf(value.native?.usage)
    if (typeof body.id === 'string' && body.store !== false) await store(context, { id: body.id, keyId: plan.keyId, body, provider: target.provider.name, context: null }, true)
    return { usage, cost: gateway.cost(target, usage), failed: false, respond: () => sendJson(exchange.res, 200, body, { ...headers, ...upstreamHeaders(target.provider.name, value.requestId) }) }
  }
  const { request, added } = plan.translated()
  const result = gateway.result(request, value.chat, target)
  const id = itemId('resp', 16)
  const body = responseObject(plan.input, id, result.created, { status: 'completed', output: outputOf(result), usage: result.usage, finishReason: result.finishReason })
  const choice = result.choices[0]
  const conversation = [...(plan.previous?.context ?? []), ...added, assistantMessage(choice.content ?? '', choice.toolCalls ?? [])]
  await store(context, { id, keyId: plan.keyId, body, provider: null, context: conversation }, plan.input.store !== false)
  return { usage: result.usage, cost: result.cost, failed: false, respond: () => sendJson(exchange.res, 200, body, { ...headers, ...upstreamHeaders(result.provider, result.upstreamRequestId) }) }
}

/** A provider's own Responses stream, passed on event by event (the response's `model` renamed to the one asked for). */
async function relayStream(plan: Plan, context: CallContext, stream: { first: IteratorResult<{ event?: string; data: string }>; iterator: AsyncIterator<{ event?: string; data: string }> }, provider: string, requestId: string | undefined): Promise<CallResult> {
  const { res } = context.exchange
  res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...context.headers, ...upstreamHeaders(provider, requestId) })
  const outcome: CallResult = { failed: false }
  let next = stream.first
  let sequence = 0
  try {
    while (!next.done) {
      const { event, data } = next.value
      if (res.destroyed) return outcome
      let type = event
      let text = data
      if (!type || LIFECYCLE.has(type)) {
        const parsed = JSON.parse(data)
        type = typeof parsed?.type === 'string' ? parsed.type : type
        if (parsed?.response && typeof parsed.response === 'object') {
          parsed.response.model = plan.input.model
          text = JSON.stringify(parsed)
          if (type === 'response.completed' || type === 'response.incomplete') {
            outcome.usage = chatUsageOf(parsed.response.usage)
            const body = parsed.response
            if (typeof body.id === 'string' && body.store !== false) await store(context, { id: body.id, keyId: plan.keyId, body, provider, context: null }, true)
          }
          if (type === 'response.failed') outcome.failed = true
        }
        if (typeof parsed?.sequence_number === 'number') sequence = parsed.sequence_number + 1
      }
      await writeEvent(res, text, type)
      next = await stream.iterator.next()
    }
  } catch (error) {
    await stream.iterator.return?.()
    if (error instanceof ClientAbortError || res.destroyed) return outcome
    outcome.failed = true
    const failure = describeFailure(context.gateway.failure(error instanceof SyntaxError ? new UpstreamError('protocol', `provider "${provider}" sent a stream event that is not JSON`) : error))
    await writeEvent(res, JSON.stringify({ type: 'error', sequence_number: sequence, code: failure.code, message: failure.message, param: null }), 'error')
  }
  res.end()
  return outcome
}

/** A translated stream: the gateway's chat events written as the Responses API's typed events. */
async function translateStream(plan: Plan, context: CallContext, stream: { first: IteratorResult<Delta>; iterator: AsyncIterator<Delta> }, target: Attempt['target'], requestId: string | undefined): Promise<CallResult> {
  const { res } = context.exchange
  const { gateway } = context
  const { added } = plan.translated()
  const id = itemId('resp', 16)
  const createdAt = Math.floor(context.exchange.ctx.services.clock().getTime() / 1000)
  res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...context.headers, ...upstreamHeaders(target.provider.name, requestId) })
  const writer = new ResponseEventWriter(res, (fields) => responseObject(plan.input, id, createdAt, fields))
  const outcome: CallResult = { failed: false }
  await writer.start()
  try {
    for await (const event of gateway.events(stream.first, stream.iterator, target)) {
      if (res.destroyed) return outcome
      if (event.type === 'delta') await writer.push(event)
      else {
        outcome.usage = event.usage
        outcome.cost = event.cost
        const response = await writer.finish(event.finishReasons[0]?.finishReason ?? 'stop', event.usage)
        const conversation = [...(plan.previous?.context ?? []), ...added, assistantMessage(writer.text, writer.toolCalls)]
        // Kept before the client hears it is complete, so a next call with previous_response_id finds it.
        await store(context, { id, keyId: plan.keyId, body: response as Record<string, unknown>, provider: null, context: conversation }, plan.input.store !== false)
        await writer.completed(response)
      }
    }
  } catch (error) {
    if (error instanceof ClientAbortError || res.destroyed) return outcome
    outcome.failed = true
    const failure = describeFailure(error)
    await writer.fail(failure.code, failure.message)
  }
  res.end()
  return outcome
}

async function answerStream(plan: Plan, context: CallContext): Promise<CallResult> {
  const { value, target } = await context.gateway.call(plan.input.model, context.signal, async (attempt) => {
    if (speaksResponses(plan, attempt)) {
      const response = await nativeRequest(plan, attempt, true)
      const iterator = response.events()[Symbol.asyncIterator]()
      // Wait for the first event inside the retry loop, so a stream that fails at once is retried too.
      return { kind: 'native' as const, native: { iterator, first: await iterator.next() }, requestId: response.requestId }
    }
    const started = await attempt.provider.stream(attempt.chatCall(plan.translated().request))
    const iterator = started.deltas[Symbol.asyncIterator]()
    return { kind: 'chat' as const, chat: { iterator, first: await iterator.next() }, requestId: started.upstreamRequestId }
  })
  if (value.kind === 'native') {
    const result = await relayStream(plan, context, value.native, target.provider.name, value.requestId)
    return { ...result, cost: context.gateway.cost(target, result.usage) }
  }
  return translateStream(plan, context, value.chat, target, value.requestId)
}

/** POST /v1/responses */
export const handleCreateResponse = gatewayHandler(async ({ req, ctx }, pass) => {
  const input = responsesInput.parse(await readJson(req, CHAT_BODY_LIMIT))
  const keyId = pass.key?.id ?? null
  let previous: StoredResponse | null = null
  if (input.previous_response_id) {
    previous = await responseStore(ctx.services).get(input.previous_response_id, keyId)
    if (!previous) throw notFound(input.previous_response_id, 'previous_response_id')
    if (previous.provider === null && previous.context === null) {
      throw new GatewayError(400, 'invalid_request', 'The conversation up to that response has grown past 16 MiB and is no longer kept: start a new one (leave previous_response_id out).', 'previous_response_id')
    }
  }
  let translated: ReturnType<Plan['translated']> | undefined
  const plan: Plan = { input, keyId, previous, translated: () => (translated ??= chatRequestOf(input, previous?.context ?? [])) }
  // A request no chat provider could take fails here, before any key quota or upstream call is spent on it,
  // unless the conversation lives at a provider that reads it as it is.
  if (!previous?.provider && !(await servedNatively(ctx, input.model))) plan.translated()
  return { model: input.model, run: (context) => (input.stream ? answerStream(plan, context) : answerWhole(plan, context)) }
}, 'openai')

/** Whether the model's first choice is a provider that serves the Responses API itself. */
async function servedNatively(ctx: Exchange['ctx'], model: string): Promise<boolean> {
  try {
    const gateway = await ctx.services.chat()
    return gateway.targets(model)[0].provider.responsesApi
  } catch {
    return false
  }
}

/** GET /v1/responses/{id} */
export async function handleGetResponse(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx, exchange.req)
    const { id } = responseIdInput.parse(exchange.params)
    const found = await responseStore(exchange.ctx.services).get(id, pass.key?.id ?? null)
    if (!found) throw notFound(id)
    sendJson(exchange.res, 200, found.body)
  } catch (error) {
    sendGatewayError(exchange, 'openai', error)
  }
}

/** DELETE /v1/responses/{id}: gone here, and at the provider that keeps it (if one does). */
export async function handleDeleteResponse(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx, exchange.req)
    const { id } = responseIdInput.parse(exchange.params)
    const responses = responseStore(exchange.ctx.services)
    const found = await responses.get(id, pass.key?.id ?? null)
    if (!found || !(await responses.delete(id, pass.key?.id ?? null))) throw notFound(id)
    if (found.provider) await deleteAtProvider(exchange, found.provider, id)
    sendJson(exchange.res, 200, { id, object: 'response', deleted: true })
  } catch (error) {
    sendGatewayError(exchange, 'openai', error)
  }
}

/** Asks the provider that keeps a response to delete it too; its failure is logged, not the client's concern (Plaza no longer serves it). */
async function deleteAtProvider(exchange: Exchange, provider: string, id: string) {
  const gateway = await exchange.ctx.services.chat()
  const config = gateway.provider(provider)
  const request = config && gateway.requestProvider(provider, { method: 'DELETE', url: `${config.baseUrl}/responses/${encodeURIComponent(id)}`, headers: openaiHeaders(config), signal: new AbortController().signal })
  await request?.then(
    (response) => response.bytes(64 * 1024),
    (error) => exchange.ctx.services.logger.info('deleting a response at its provider failed', { provider, message: gateway.redact(String((error as Error)?.message ?? error)) }),
  )
}
