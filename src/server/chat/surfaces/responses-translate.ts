/**
 * OpenAI's Responses API in terms of the gateway's chat core, both ways (for providers that do
 * not serve `/responses` themselves):
 * - in: `instructions` become a system message; input items become chat messages (`message`
 *   items by role, with input_text / input_image / input_file parts; `function_call` items an
 *   assistant's tool calls, consecutive ones in one message; `function_call_output` items tool
 *   messages; reasoning items are dropped); function tools, tool_choice, `text.format` (JSON
 *   schema), max_output_tokens and sampling become chat completions' fields;
 * - out: the answer's reasoning becomes a `reasoning` item, its text a `message` item with an
 *   `output_text` part, its tool calls `function_call` items; `length` is status `incomplete`;
 *   usage is input/output tokens; a stream is the typed events (response.created ... completed).
 */
import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { ChatMessage, ChatParams, ChatUsage, ContentPart, ToolCall } from '../../../shared/schemas/chat.js'
import type { ResponseInputItem, ResponsesInput } from '../../../shared/schemas/gateway-apis.js'
import { writeEvent } from '../call.js'
import { GatewayError } from '../errors.js'
import type { ChatRequest, ChatResult, ChatStreamEvent } from '../gateway.js'

/** A fresh id with OpenAI's prefix for its kind (`resp`, `msg`, `fc`, `rs`). */
export function itemId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`
}

function refuse(message: string, param: string): never {
  throw new GatewayError(400, 'invalid_request', message, param)
}

type Part = Extract<ResponseInputItem, { type: 'message' }>['content']

function textOf(content: Part | string, param: string): string {
  if (typeof content === 'string') return content
  return content
    .map((part) => {
      if (part.type === 'input_text' || part.type === 'output_text') return part.text
      if (part.type === 'refusal') return part.refusal
      return refuse(`a ${part.type} part cannot stand where only text can (a system, developer or assistant message, or a function output)`, param)
    })
    .join('')
}

function userParts(content: Part | string): string | ContentPart[] {
  if (typeof content === 'string') return content
  return content.map((part): ContentPart => {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: part.text }
      case 'refusal':
        return { type: 'text', text: part.refusal }
      case 'input_image':
        if (!part.image_url) refuse('an input_image needs image_url (an http(s) or data:image URL): this gateway has no Files API for file_id', 'input')
        return { type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } }
      case 'input_file':
        if (!part.file_data) refuse('an input_file needs file_data (a data: URL): this gateway has no Files API for file_id or file_url', 'input')
        return { type: 'file', file: { file_data: part.file_data, ...(part.filename ? { filename: part.filename } : {}) } }
      case 'input_audio':
        return { type: 'input_audio', input_audio: part.input_audio }
    }
  })
}

/** The input items as chat messages (consecutive function calls, and the assistant text before them, share one assistant message). */
export function inputMessages(input: ResponsesInput['input']): ChatMessage[] {
  if (input === undefined) return []
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const messages: ChatMessage[] = []
  for (const item of input) {
    switch (item.type) {
      case 'message': {
        const message = item as Extract<ResponseInputItem, { type: 'message' }>
        if (message.role === 'user') messages.push({ role: 'user', content: userParts(message.content) })
        else if (message.role === 'assistant') messages.push({ role: 'assistant', content: textOf(message.content, 'input') })
        else messages.push({ role: message.role, content: textOf(message.content, 'input') })
        break
      }
      case 'function_call': {
        const call = item as Extract<ResponseInputItem, { type: 'function_call' }>
        const toolCall: ToolCall = { id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }
        const last = messages.at(-1)
        if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), toolCall]
        else messages.push({ role: 'assistant', tool_calls: [toolCall] })
        break
      }
      case 'function_call_output': {
        const output = item as Extract<ResponseInputItem, { type: 'function_call_output' }>
        messages.push({ role: 'tool', tool_call_id: output.call_id, content: textOf(output.output, 'input') })
        break
      }
      case 'reasoning':
        // The model's own earlier reasoning: chat completions take none back.
        break
      default:
        refuse(`input items of type ${item.type} need a provider that serves the Responses API itself; this model's is spoken to in chat completions`, 'input')
    }
  }
  return messages
}

/** The request's fields as chat completions' parameters. */
export function chatParams(input: ResponsesInput): ChatParams {
  const params: Record<string, unknown> = {}
  if (input.tools?.length) {
    params.tools = input.tools.map((tool) => {
      if (tool.type !== 'function') refuse(`the ${tool.type} tool is built into OpenAI's Responses API; this model's provider is spoken to in chat completions, which take function tools only`, 'tools')
      const fn = tool as { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean }
      return { type: 'function', function: { name: fn.name, ...(fn.description ? { description: fn.description } : {}), ...(fn.parameters ? { parameters: fn.parameters } : {}), ...(fn.strict !== undefined ? { strict: fn.strict } : {}) } }
    })
  }
  const choice = input.tool_choice
  if (typeof choice === 'string') params.tool_choice = choice
  else if (choice) {
    if (choice.type !== 'function' || typeof choice.name !== 'string') refuse('tool_choice is none, auto, required or {type: "function", name} for this model', 'tool_choice')
    params.tool_choice = { type: 'function', function: { name: choice.name } }
  }
  if (input.parallel_tool_calls !== undefined) params.parallel_tool_calls = input.parallel_tool_calls
  const format = input.text?.format
  if (format?.type === 'json_object') params.response_format = { type: 'json_object' }
  else if (format?.type === 'json_schema') {
    const schema = format as { name: string; schema: Record<string, unknown>; description?: string; strict?: boolean }
    params.response_format = { type: 'json_schema', json_schema: { name: schema.name, schema: schema.schema, ...(schema.description ? { description: schema.description } : {}), ...(schema.strict !== undefined ? { strict: schema.strict } : {}) } }
  }
  if (input.max_output_tokens !== undefined) params.max_tokens = input.max_output_tokens
  if (input.temperature !== undefined) params.temperature = input.temperature
  if (input.top_p !== undefined) params.top_p = input.top_p
  if (input.top_logprobs) {
    params.logprobs = true
    params.top_logprobs = input.top_logprobs
  }
  if (input.user !== undefined) params.user = input.user
  if (input.reasoning?.effort) params.reasoning_effort = input.reasoning.effort
  return params as ChatParams
}

/** The chat request of a Responses request: instructions, then the conversation so far, then the new input. */
export function chatRequestOf(input: ResponsesInput, earlier: ChatMessage[]): { request: ChatRequest; added: ChatMessage[] } {
  const added = inputMessages(input.input)
  const messages: ChatMessage[] = [...(input.instructions ? [{ role: 'system' as const, content: input.instructions }] : []), ...earlier, ...added]
  if (!messages.some((message) => message.role !== 'system')) refuse('input is required (a string, or items), unless previous_response_id continues a conversation', 'input')
  return { request: { model: input.model, messages, params: chatParams(input) }, added }
}

/** OpenAI's usage of a response. */
export function responsesUsage(usage: ChatUsage | undefined) {
  if (!usage) return null
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  }
}

/** A provider's Responses usage as the gateway's (for keys, budgets and prices). */
export function chatUsageOf(raw: any): ChatUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const count = (value: unknown) => (Number.isFinite(Number(value)) && Number(value) > 0 ? Math.floor(Number(value)) : 0)
  const prompt = count(raw.input_tokens)
  const completion = count(raw.output_tokens)
  const cached = count(raw.input_tokens_details?.cached_tokens)
  const reasoning = count(raw.output_tokens_details?.reasoning_tokens)
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: raw.total_tokens === undefined ? prompt + completion : count(raw.total_tokens),
    ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(reasoning ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
  }
}

type Status = 'in_progress' | 'completed' | 'incomplete' | 'failed'

/** The response object, as OpenAI's API writes it, for this request. */
export function responseObject(input: ResponsesInput, id: string, createdAt: number, fields: { status: Status; output: unknown[]; usage?: ChatUsage; finishReason?: string; error?: { code: string; message: string } }) {
  const incomplete = fields.finishReason === 'length' ? { reason: 'max_output_tokens' } : fields.finishReason === 'content_filter' ? { reason: 'content_filter' } : null
  return {
    id,
    object: 'response' as const,
    created_at: createdAt,
    status: fields.status === 'completed' && incomplete ? ('incomplete' as const) : fields.status,
    background: false,
    error: fields.error ?? null,
    incomplete_details: fields.status === 'completed' ? incomplete : null,
    instructions: input.instructions ?? null,
    max_output_tokens: input.max_output_tokens ?? null,
    max_tool_calls: null,
    model: input.model,
    output: fields.output,
    parallel_tool_calls: input.parallel_tool_calls ?? true,
    previous_response_id: input.previous_response_id ?? null,
    reasoning: { effort: input.reasoning?.effort ?? null, summary: null },
    service_tier: 'default',
    store: input.store ?? true,
    temperature: input.temperature ?? 1,
    text: { format: input.text?.format ?? { type: 'text' }, verbosity: 'medium' },
    tool_choice: input.tool_choice ?? 'auto',
    tools: input.tools ?? [],
    top_logprobs: input.top_logprobs ?? 0,
    top_p: input.top_p ?? 1,
    truncation: 'disabled',
    usage: responsesUsage(fields.usage),
    user: input.user ?? null,
    metadata: input.metadata ?? {},
  }
}

const reasoningItem = (id: string, text: string, status: 'in_progress' | 'completed' = 'completed') => ({ type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text }], status })
const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] })
const messageItem = (id: string, parts: unknown[], status: 'in_progress' | 'completed' = 'completed') => ({ type: 'message', id, status, role: 'assistant', content: parts })
const callItem = (id: string, call: ToolCall, status: 'in_progress' | 'completed' = 'completed') => ({ type: 'function_call', id, call_id: call.id, name: call.function.name, arguments: call.function.arguments, status })

/** The output items of a complete answer (its first choice). */
export function outputOf(result: ChatResult): unknown[] {
  const choice = result.choices[0]
  const output: unknown[] = []
  if (choice.reasoning) output.push(reasoningItem(itemId('rs'), choice.reasoning))
  const parts: unknown[] = []
  if (choice.content) parts.push(textPart(choice.content))
  if (choice.refusal) parts.push({ type: 'refusal', refusal: choice.refusal })
  // A message unless the answer is only tool calls (an empty answer is an empty message).
  if (parts.length === 0 && !choice.toolCalls?.length) parts.push(textPart(''))
  if (parts.length > 0) output.push(messageItem(itemId('msg'), parts))
  for (const call of choice.toolCalls ?? []) output.push(callItem(itemId('fc'), call))
  return output
}

/** The assistant's turn as a chat message, for the conversation kept for previous_response_id. */
export function assistantMessage(content: string, toolCalls: ToolCall[]): ChatMessage {
  return toolCalls.length > 0 ? { role: 'assistant', ...(content ? { content } : {}), tool_calls: toolCalls } : { role: 'assistant', content }
}

/**
 * Writes a translated answer as the Responses API's typed events: output items open as their
 * first piece arrives (reasoning, then the message, then each function call), each closes with its
 * `.done` events before the next opens, and `response.completed` (or `.incomplete`) carries the
 * whole response with its usage. Every event has its `sequence_number`.
 */
export class ResponseEventWriter {
  private sequence = 0
  private readonly output: unknown[] = []
  private open: { kind: 'reasoning' | 'message'; id: string; index: number; text: string; part: 'output_text' | 'refusal' | 'reasoning_text' } | null = null
  private readonly calls = new Map<number, { id: string; index: number; call: ToolCall }>()
  private openCalls: number[] = []
  /** The answer's text and tool calls, for the conversation kept after it. */
  text = ''
  readonly toolCalls: ToolCall[] = []

  constructor(
    private readonly res: ServerResponse,
    private readonly snapshot: (fields: { status: Status; output: unknown[]; usage?: ChatUsage; finishReason?: string; error?: { code: string; message: string } }) => unknown,
  ) {}

  private emit(type: string, data: Record<string, unknown>): Promise<void> {
    return writeEvent(this.res, JSON.stringify({ type, sequence_number: this.sequence++, ...data }), type)
  }

  async start() {
    const response = this.snapshot({ status: 'in_progress', output: [] })
    await this.emit('response.created', { response })
    await this.emit('response.in_progress', { response })
  }

  private async closeOpen() {
    const item = this.open
    if (!item) return
    this.open = null
    if (item.kind === 'reasoning') {
      await this.emit('response.reasoning_text.done', { item_id: item.id, output_index: item.index, content_index: 0, text: item.text })
      await this.emit('response.content_part.done', { item_id: item.id, output_index: item.index, content_index: 0, part: { type: 'reasoning_text', text: item.text } })
      this.output[item.index] = reasoningItem(item.id, item.text)
    } else {
      const part = item.part === 'refusal' ? { type: 'refusal', refusal: item.text } : textPart(item.text)
      if (item.part === 'refusal') await this.emit('response.refusal.done', { item_id: item.id, output_index: item.index, content_index: 0, refusal: item.text })
      else await this.emit('response.output_text.done', { item_id: item.id, output_index: item.index, content_index: 0, text: item.text, logprobs: [] })
      await this.emit('response.content_part.done', { item_id: item.id, output_index: item.index, content_index: 0, part })
      this.output[item.index] = messageItem(item.id, [part])
    }
    await this.emit('response.output_item.done', { output_index: item.index, item: this.output[item.index] })
  }

  private async closeCalls() {
    for (const position of this.openCalls) {
      const { id, index, call } = this.calls.get(position)!
      await this.emit('response.function_call_arguments.done', { item_id: id, output_index: index, name: call.function.name, arguments: call.function.arguments })
      this.output[index] = callItem(id, call)
      await this.emit('response.output_item.done', { output_index: index, item: this.output[index] })
    }
    this.openCalls = []
  }

  /** Opens a reasoning or message item (closing whatever was open) unless one of that kind is open. */
  private async ensure(kind: 'reasoning' | 'message', part: 'output_text' | 'refusal' | 'reasoning_text') {
    if (this.open?.kind === kind && this.open.part === part) return this.open
    await this.closeOpen()
    await this.closeCalls()
    const id = itemId(kind === 'reasoning' ? 'rs' : 'msg')
    const index = this.output.length
    const item = kind === 'reasoning' ? { type: 'reasoning', id, summary: [], content: [], status: 'in_progress' } : messageItem(id, [], 'in_progress')
    this.output.push(item)
    this.open = { kind, id, index, text: '', part }
    await this.emit('response.output_item.added', { output_index: index, item })
    const empty = part === 'reasoning_text' ? { type: 'reasoning_text', text: '' } : part === 'refusal' ? { type: 'refusal', refusal: '' } : textPart('')
    await this.emit('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: empty })
    return this.open
  }

  /** One event of the gateway's stream. */
  async push(event: Extract<ChatStreamEvent, { type: 'delta' }>) {
    // The Responses API has one choice.
    if (event.index !== 0) return
    if (event.reasoning) {
      const item = await this.ensure('reasoning', 'reasoning_text')
      item.text += event.reasoning
      await this.emit('response.reasoning_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta: event.reasoning })
    }
    if (event.content) {
      const item = await this.ensure('message', 'output_text')
      item.text += event.content
      this.text += event.content
      await this.emit('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta: event.content, logprobs: [] })
    }
    if (event.refusal) {
      const item = await this.ensure('message', 'refusal')
      item.text += event.refusal
      await this.emit('response.refusal.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta: event.refusal })
    }
    for (const piece of event.toolCalls ?? []) {
      let open = this.calls.get(piece.index)
      if (!open) {
        await this.closeOpen()
        const call: ToolCall = { id: piece.id ?? itemId('call'), type: 'function', function: { name: piece.function?.name ?? '', arguments: '' } }
        open = { id: itemId('fc'), index: this.output.length, call }
        this.calls.set(piece.index, open)
        this.openCalls.push(piece.index)
        this.toolCalls.push(call)
        this.output.push(callItem(open.id, call, 'in_progress'))
        await this.emit('response.output_item.added', { output_index: open.index, item: callItem(open.id, { ...call, function: { ...call.function } }, 'in_progress') })
      } else if (piece.function?.name && !open.call.function.name) open.call.function.name = piece.function.name
      const delta = piece.function?.arguments
      if (delta) {
        open.call.function.arguments += delta
        await this.emit('response.function_call_arguments.delta', { item_id: open.id, output_index: open.index, delta })
      }
    }
  }

  /** Closes every item; resolves with the whole response (to store before it is sent). */
  async finish(finishReason: string, usage: ChatUsage | undefined): Promise<{ status: string }> {
    await this.closeOpen()
    await this.closeCalls()
    return this.snapshot({ status: 'completed', output: this.output, usage, finishReason }) as { status: string }
  }

  /** Sends the whole response: `response.completed`, or `response.incomplete` when the answer was cut by its length. */
  completed(response: { status: string }) {
    return this.emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response })
  }

  /** The stream broke off: `response.failed`, with what had arrived. */
  async fail(code: string, message: string) {
    await this.emit('response.failed', { response: this.snapshot({ status: 'failed', output: this.output, error: { code, message } }) })
  }
}
