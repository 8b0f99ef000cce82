/**
 * Anthropic's Messages API in (`POST /v1/messages`), so that Anthropic's clients and the tools
 * built on them run on any configured provider:
 * - to an Anthropic provider the request goes as the client sent it (its model name set), and its
 *   answer or events come back as they are;
 * - to an OpenAI-compatible provider it is translated to chat completions (system, text and image
 *   blocks, tool_use / tool_result, tools and tool_choice, max_tokens, stop sequences), and the
 *   answer back to a Message: text, tool_use and (when `thinking` is on) thinking blocks, Anthropic's
 *   stop reasons and usage; streamed as Anthropic's events (message_start, ping,
 *   content_block_start/delta/stop, message_delta, message_stop).
 * Failures are Anthropic's `{type: "error", error: {type, message}}`, in a stream its `error` event.
 */
import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { ChatMessage, ChatParams, ChatUsage, ContentPart, ToolCall } from '../../../shared/schemas/chat.js'
import { messagesInput, type AnthropicBlock, type MessagesInput } from '../../../shared/schemas/gateway-apis.js'
import { readJson, sendJson } from '../../http.js'
import { anthropicError, describeFailure, EVENT_STREAM_HEADERS, gatewayHandler, upstreamHeaders, writeEvent, type CallContext, type CallResult } from '../call.js'
import { ClientAbortError, GatewayError, UpstreamError } from '../errors.js'
import type { Attempt, ChatRequest, ChatStreamEvent } from '../gateway.js'
import { CHAT_BODY_LIMIT } from '../http.js'
import { anthropicHeaders, anthropicUsage } from '../providers/anthropic.js'
import type { Delta } from '../providers/types.js'

const STOP_REASONS: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal', function_call: 'tool_use' }

function refuse(message: string, param: string): never {
  throw new GatewayError(400, 'invalid_request', message, param)
}

function messageId(): string {
  return `msg_${randomBytes(12).toString('hex')}`
}

type Block = AnthropicBlock & Record<string, any>

function imageUrl(block: Block): string {
  const source = block.source
  return source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url
}

function textOfBlocks(content: string | Block[] | undefined): string {
  if (content === undefined) return ''
  if (typeof content === 'string') return content
  return content.filter((block) => block.type === 'text').map((block) => block.text).join('')
}

/** Anthropic's conversation as chat messages: tool results become tool messages, right after the assistant's tool calls. */
export function chatMessagesOf(input: MessagesInput): ChatMessage[] {
  const messages: ChatMessage[] = []
  const system = typeof input.system === 'string' ? input.system : (input.system ?? []).map((block) => block.text).join('\n\n')
  if (system) messages.push({ role: 'system', content: system })
  for (const message of input.messages) {
    if (typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content })
      continue
    }
    const blocks = message.content as Block[]
    if (message.role === 'assistant') {
      const text = blocks.filter((block) => block.type === 'text').map((block) => block.text).join('')
      const toolCalls: ToolCall[] = blocks.filter((block) => block.type === 'tool_use').map((block) => ({ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } }))
      for (const block of blocks) {
        if (!['text', 'tool_use', 'thinking', 'redacted_thinking'].includes(block.type)) refuse(`an assistant ${block.type} block needs an Anthropic provider; this model's is spoken to in chat completions`, 'messages')
      }
      messages.push(toolCalls.length > 0 ? { role: 'assistant', ...(text ? { content: text } : {}), tool_calls: toolCalls } : { role: 'assistant', content: text })
      continue
    }
    // A user turn: its tool results first (as tool messages), then what the user says, images included.
    const parts: ContentPart[] = []
    const resultImages: ContentPart[] = []
    for (const block of blocks) {
      if (block.type === 'tool_result') {
        const content = block.content as string | Block[] | undefined
        const text = textOfBlocks(content)
        messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text })
        if (Array.isArray(content)) for (const inner of content) if (inner.type === 'image') resultImages.push({ type: 'image_url', image_url: { url: imageUrl(inner) } })
      } else if (block.type === 'text') parts.push({ type: 'text', text: block.text })
      else if (block.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(block) } })
      else refuse(`a ${block.type} block needs an Anthropic provider; this model's is spoken to in chat completions`, 'messages')
    }
    const content = [...resultImages, ...parts]
    if (content.length > 0) messages.push({ role: 'user', content: content.every((part) => part.type === 'text') ? content.map((part) => (part as { text: string }).text).join('') : content })
  }
  return messages
}

/** The request's other fields as chat completions' parameters. */
export function chatParamsOf(input: MessagesInput): ChatParams {
  const params: Record<string, unknown> = { max_tokens: input.max_tokens }
  if (input.tools?.length) {
    params.tools = input.tools.map((tool) => {
      const custom = tool as { name: string; description?: string; input_schema?: Record<string, unknown>; type?: string }
      if (custom.type !== undefined && custom.type !== 'custom') refuse(`the ${custom.type} tool runs at Anthropic; this model's provider is spoken to in chat completions, which take custom tools only`, 'tools')
      return { type: 'function', function: { name: custom.name, ...(custom.description ? { description: custom.description } : {}), parameters: custom.input_schema ?? { type: 'object', properties: {} } } }
    })
  }
  const choice = input.tool_choice
  if (choice) {
    params.tool_choice = choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : choice.type === 'none' ? 'none' : { type: 'function', function: { name: (choice as { name: string }).name } }
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use) params.parallel_tool_calls = false
  }
  if (input.temperature !== undefined) params.temperature = input.temperature
  if (input.top_p !== undefined) params.top_p = input.top_p
  if (input.top_k !== undefined) params.top_k = input.top_k
  if (input.stop_sequences?.length) params.stop = input.stop_sequences
  if (input.metadata?.user_id) params.user = input.metadata.user_id
  return params as ChatParams
}

/** Anthropic's usage from the gateway's: its input_tokens leave out the tokens read from the cache. */
function messageUsage(usage: ChatUsage | undefined) {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0
  return { input_tokens: (usage?.prompt_tokens ?? 0) - cached, output_tokens: usage?.completion_tokens ?? 0, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 }
}

function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed = args.trim() ? JSON.parse(args) : {}
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { value: parsed }
  } catch {
    return {}
  }
}

function thinkingOn(input: MessagesInput): boolean {
  return input.thinking?.type === 'enabled'
}

/** An Anthropic provider's answer or stream, as the client asked for it (its model name set). */
function nativeRequest(input: MessagesInput, attempt: Attempt, exchange: CallContext['exchange'], stream: boolean) {
  const provider = attempt.target.provider
  const beta = exchange.req.headers['anthropic-beta']
  return attempt.request({
    url: `${provider.baseUrl}/v1/messages`,
    headers: { ...anthropicHeaders(provider, stream), ...(typeof beta === 'string' ? { 'anthropic-beta': beta } : {}) },
    body: { json: { ...input, model: attempt.target.model, stream } },
  })
}

async function answerWhole(input: MessagesInput, request: () => ChatRequest, context: CallContext): Promise<CallResult> {
  const { gateway, signal, headers, exchange } = context
  const { value, target } = await gateway.call(input.model, signal, async (attempt) => {
    if (attempt.target.provider.type === 'anthropic') {
      const response = await nativeRequest(input, attempt, exchange, false)
      return { kind: 'native' as const, body: await response.json(), requestId: response.requestId }
    }
    return { kind: 'chat' as const, completion: await attempt.provider.complete(attempt.chatCall(request())), requestId: undefined }
  })
  if (value.kind === 'native') {
    const usage = anthropicUsage(value.body?.usage)
    const body = { ...value.body, model: input.model }
    return { usage, cost: gateway.cost(target, usage), failed: false, respond: () => sendJson(exchange.res, 200, body, { ...headers, ...upstreamHeaders(target.provider.name, value.requestId) }) }
  }
  const result = gateway.result(request(), value.completion, target)
  const choice = result.choices[0]
  const content: unknown[] = []
  if (thinkingOn(input) && choice.reasoning) content.push({ type: 'thinking', thinking: choice.reasoning, signature: '' })
  if (choice.content) content.push({ type: 'text', text: choice.content })
  for (const call of choice.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) })
  if (content.length === 0) content.push({ type: 'text', text: '' })
  const body = {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model: input.model,
    content,
    stop_reason: STOP_REASONS[choice.finishReason] ?? 'end_turn',
    stop_sequence: null,
    usage: messageUsage(result.usage),
  }
  return { usage: result.usage, cost: result.cost, failed: false, respond: () => sendJson(exchange.res, 200, body, { ...headers, ...upstreamHeaders(result.provider, result.upstreamRequestId) }) }
}

/** Writes a translated stream as Anthropic's events: one content block at a time, closed before the next opens. */
class MessageEventWriter {
  private index = -1
  private open: 'thinking' | 'text' | { call: number } | null = null
  private readonly calls = new Map<number, number>()

  constructor(
    private readonly res: ServerResponse,
    private readonly thinking: boolean,
  ) {}

  emit(type: string, data: Record<string, unknown> = {}) {
    return writeEvent(this.res, JSON.stringify({ type, ...data }), type)
  }

  private async close() {
    if (this.open === null) return
    this.open = null
    await this.emit('content_block_stop', { index: this.index })
  }

  private async start(kind: 'thinking' | 'text' | { call: number }, block: Record<string, unknown>) {
    await this.close()
    this.index++
    this.open = kind
    await this.emit('content_block_start', { index: this.index, content_block: block })
  }

  async push(event: Extract<ChatStreamEvent, { type: 'delta' }>) {
    if (event.index !== 0) return
    if (event.reasoning && this.thinking) {
      if (this.open !== 'thinking') await this.start('thinking', { type: 'thinking', thinking: '', signature: '' })
      await this.emit('content_block_delta', { index: this.index, delta: { type: 'thinking_delta', thinking: event.reasoning } })
    }
    const text = (event.content ?? '') + (event.refusal ?? '')
    if (text) {
      if (this.open !== 'text') await this.start('text', { type: 'text', text: '' })
      await this.emit('content_block_delta', { index: this.index, delta: { type: 'text_delta', text } })
    }
    for (const piece of event.toolCalls ?? []) {
      if (!this.calls.has(piece.index)) {
        await this.start({ call: piece.index }, { type: 'tool_use', id: piece.id ?? `toolu_${randomBytes(12).toString('hex')}`, name: piece.function?.name ?? '', input: {} })
        this.calls.set(piece.index, this.index)
      }
      // Pieces of an earlier call after a later one began cannot be told apart in Anthropic's events: OpenAI's streams send calls one after another.
      const args = piece.function?.arguments
      if (args) await this.emit('content_block_delta', { index: this.calls.get(piece.index)!, delta: { type: 'input_json_delta', partial_json: args } })
    }
  }

  async finish(finishReason: string, usage: ChatUsage | undefined) {
    if (this.index < 0) await this.start('text', { type: 'text', text: '' })
    await this.close()
    await this.emit('message_delta', { delta: { stop_reason: STOP_REASONS[finishReason] ?? 'end_turn', stop_sequence: null }, usage: messageUsage(usage) })
    await this.emit('message_stop')
  }
}

/** The Anthropic provider's own events, passed on (message_start's model renamed to the one asked for); its usage read on the way. */
async function relayStream(input: MessagesInput, context: CallContext, stream: { first: IteratorResult<{ event?: string; data: string }>; iterator: AsyncIterator<{ event?: string; data: string }> }, provider: string, requestId: string | undefined): Promise<CallResult> {
  const { res } = context.exchange
  res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...context.headers, ...upstreamHeaders(provider, requestId) })
  const outcome: CallResult = { failed: false }
  let usage: Record<string, unknown> = {}
  let next = stream.first
  try {
    while (!next.done) {
      if (res.destroyed) return outcome
      const { event, data } = next.value
      let text = data
      if (event === 'message_start' || event === 'message_delta' || event === 'error') {
        const parsed = JSON.parse(data)
        if (event === 'message_start' && parsed?.message) {
          parsed.message.model = input.model
          usage = { ...parsed.message.usage }
          text = JSON.stringify(parsed)
        } else if (event === 'message_delta') {
          for (const [field, value] of Object.entries(parsed?.usage ?? {})) if (value !== null && value !== undefined) usage[field] = value
        } else outcome.failed = true
      }
      await writeEvent(res, text, event)
      next = await stream.iterator.next()
    }
    outcome.usage = anthropicUsage(usage)
  } catch (error) {
    await stream.iterator.return?.()
    if (error instanceof ClientAbortError || res.destroyed) return outcome
    outcome.failed = true
    const failure = describeFailure(context.gateway.failure(error instanceof SyntaxError ? new UpstreamError('protocol', `provider "${provider}" sent a stream event that is not JSON`) : error))
    await writeEvent(res, JSON.stringify(anthropicError(failure)), 'error')
  }
  res.end()
  return outcome
}

async function answerStream(input: MessagesInput, request: () => ChatRequest, context: CallContext): Promise<CallResult> {
  const { gateway, signal, exchange } = context
  const { value, target } = await gateway.call(input.model, signal, async (attempt) => {
    if (attempt.target.provider.type === 'anthropic') {
      const response = await nativeRequest(input, attempt, exchange, true)
      const iterator = response.events()[Symbol.asyncIterator]()
      return { kind: 'native' as const, stream: { iterator, first: await iterator.next() }, requestId: response.requestId }
    }
    const started = await attempt.provider.stream(attempt.chatCall(request()))
    const iterator = started.deltas[Symbol.asyncIterator]()
    // The first piece inside the retry loop, so a stream that fails at once is retried too.
    return { kind: 'chat' as const, stream: { iterator, first: await iterator.next() as IteratorResult<Delta> }, requestId: started.upstreamRequestId }
  })
  if (value.kind === 'native') {
    const result = await relayStream(input, context, value.stream, target.provider.name, value.requestId)
    return { ...result, cost: gateway.cost(target, result.usage) }
  }
  const { res } = exchange
  res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...context.headers, ...upstreamHeaders(target.provider.name, value.requestId) })
  const writer = new MessageEventWriter(res, thinkingOn(input))
  const outcome: CallResult = { failed: false }
  await writer.emit('message_start', {
    message: { id: messageId(), type: 'message', role: 'assistant', model: input.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
  })
  await writer.emit('ping')
  try {
    for await (const event of gateway.events(value.stream.first, value.stream.iterator, target)) {
      if (res.destroyed) return outcome
      if (event.type === 'delta') await writer.push(event)
      else {
        outcome.usage = event.usage
        outcome.cost = event.cost
        await writer.finish(event.finishReasons[0]?.finishReason ?? 'stop', event.usage)
      }
    }
  } catch (error) {
    if (error instanceof ClientAbortError || res.destroyed) return outcome
    outcome.failed = true
    await writer.emit('error', anthropicError(describeFailure(error)))
  }
  res.end()
  return outcome
}

/** POST /v1/messages */
export const handleMessages = gatewayHandler(async ({ req, ctx }) => {
  const input = messagesInput.parse(await readJson(req, CHAT_BODY_LIMIT))
  let translated: ChatRequest | undefined
  const request = () => (translated ??= { model: input.model, messages: chatMessagesOf(input), params: chatParamsOf(input) })
  // What chat completions cannot carry is refused before any quota or upstream call is spent on it (unless an Anthropic provider reads it as it is).
  const gateway = await ctx.services.chat()
  const first = (() => {
    try {
      return gateway.targets(input.model)[0]
    } catch {
      return undefined
    }
  })()
  if (first && first.provider.type !== 'anthropic') request()
  return { model: input.model, run: (context) => (input.stream ? answerStream(input, request, context) : answerWhole(input, request, context)) }
}, 'anthropic')
