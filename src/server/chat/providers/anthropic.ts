/**
 * Anthropic's Messages API, translated to and from OpenAI's chat format, both ways:
 * - system and developer messages go to the top-level `system`; `tool` messages become
 *   `tool_result` blocks of a user turn (consecutive results and the user text after them share
 *   one turn, as Anthropic requires turns to alternate); an assistant's `tool_calls` become
 *   `tool_use` blocks; images become `image` blocks (base64 for data URLs, else by URL);
 * - `tools`, `tool_choice` and `parallel_tool_calls` become Anthropic's tools, tool_choice and
 *   `disable_parallel_tool_use`; JSON mode becomes an instruction, and a JSON schema a forced tool
 *   whose input is handed back as the answer's text (as LiteLLM does);
 * - `max_tokens` is always sent (Anthropic requires it), `stop` becomes `stop_sequences`,
 *   temperature is clamped to Anthropic's 0..1, `top_k` is passed, `user` becomes
 *   `metadata.user_id`; fields Anthropic lacks (penalties, seed, logprobs) are dropped;
 * - back: text blocks are the content, `tool_use` blocks the tool calls (streamed as
 *   `delta.tool_calls` pieces), thinking blocks the reasoning, and stop reasons OpenAI's.
 */
import type { ChatMessage, ChatTool, ChatUsage, ContentPart, ToolCall, ToolChoice } from '../../../shared/schemas/chat.js'
import type { ProviderConfig } from '../config.js'
import { GatewayError, UpstreamError } from '../errors.js'
import { postUpstream } from './http.js'
import { label } from './openai.js'
import type { Completion, Delta, Provider, UpstreamCall } from './types.js'
import { lookup } from '../../../shared/lookup.js'

const FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls', refusal: 'content_filter', pause_turn: 'stop' }

/** The forced tool that carries a JSON-schema answer (response_format: json_schema). */
const JSON_TOOL = 'json_output'
const JSON_INSTRUCTION = 'Answer with one JSON object and nothing else: no prose, no code fences.'

function finishReasonOf(stopReason: string | null | undefined): string {
  return (stopReason && lookup(FINISH, stopReason)) || 'stop'
}

function refuse(message: string, param: string): never {
  throw new GatewayError(400, 'invalid_request', message, param)
}

type Block = Record<string, unknown>
interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

function textBlocks(content: string | Array<{ type: string; text?: string }> | null | undefined): Block[] {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : []
  return content.filter((part) => part.type === 'text' && part.text).map((part) => ({ type: 'text', text: part.text }))
}

function imageBlock(url: string): Block {
  const data = /^data:(image\/[\w.+-]+);base64,(.*)$/is.exec(url)
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1].toLowerCase(), data: data[2] } }
  if (/^data:/i.test(url)) refuse('An image data URL must be base64 (data:image/png;base64,...)', 'messages')
  return { type: 'image', source: { type: 'url', url } }
}

function userBlocks(content: string | ContentPart[]): Block[] {
  if (typeof content === 'string') return textBlocks(content)
  return content.map((part): Block => {
    if (part.type === 'text') return { type: 'text', text: part.text }
    if (part.type === 'image_url') return imageBlock(part.image_url.url)
    return refuse(`Anthropic models take text and images; a ${part.type} content part cannot be sent to this model`, 'messages')
  })
}

function toolUse(call: ToolCall): Block {
  let input: unknown = {}
  try {
    input = call.function.arguments.trim() ? JSON.parse(call.function.arguments) : {}
  } catch {
    refuse(`tool call ${call.id} has arguments that are not JSON`, 'messages')
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) refuse(`tool call ${call.id} must have a JSON object as arguments`, 'messages')
  return { type: 'tool_use', id: call.id, name: call.function.name, input }
}

/** OpenAI's conversation as Anthropic's alternating turns, plus the system text. */
export function anthropicTurns(messages: ChatMessage[]): { system: string[]; turns: Turn[] } {
  const system: string[] = []
  const turns: Turn[] = []
  const add = (role: Turn['role'], blocks: Block[]) => {
    if (blocks.length === 0) return
    const last = turns.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else turns.push({ role, content: blocks })
  }
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textBlocks(message.content).map((block) => block.text).join(''))
        break
      case 'user':
        add('user', userBlocks(message.content))
        break
      case 'tool':
        add('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: textBlocks(message.content).map((block) => block.text).join('') }])
        break
      case 'assistant':
        add('assistant', [...textBlocks(message.content), ...(message.tool_calls ?? []).map(toolUse)])
        break
    }
  }
  // A turn of one text block is sent as plain text, as Anthropic's own examples write it.
  for (const turn of turns) if (turn.content.length === 1 && turn.content[0].type === 'text') (turn as { content: unknown }).content = turn.content[0].text
  return { system, turns }
}

function anthropicTools(tools: ChatTool[]): Block[] {
  return tools.map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
  }))
}

function anthropicToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Block | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined
  if (choice === 'none') return { type: 'none' }
  if (choice === 'auto') return { type: 'auto', ...disable }
  if (choice === 'required') return { type: 'any', ...disable }
  return { type: 'tool', name: choice.function.name, ...disable }
}

export function anthropicBody(call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const { target, params } = call
  if ((params.n ?? 1) > 1) refuse('Anthropic models give one choice per request: n must be 1', 'n')
  const { system, turns } = anthropicTurns(call.messages)
  const body: Record<string, unknown> = {
    model: target.model,
    max_tokens: params.max_completion_tokens ?? params.max_tokens ?? target.defaultMaxTokens,
    messages: turns,
  }
  const format = params.response_format
  if (format?.type === 'json_object') system.push(JSON_INSTRUCTION)
  if (system.length > 0) body.system = system.join('\n\n')
  if (params.temperature !== undefined) body.temperature = Math.min(params.temperature, 1)
  if (params.top_p !== undefined) body.top_p = params.top_p
  if (params.top_k !== undefined && target.provider.extendedSampling) body.top_k = params.top_k
  if (params.stop !== undefined) body.stop_sequences = params.stop
  if (params.user !== undefined) body.metadata = { user_id: params.user }
  const tools = anthropicTools(params.tools ?? [])
  let toolChoice = anthropicToolChoice(params.tool_choice, params.parallel_tool_calls)
  if (format?.type === 'json_schema') {
    tools.push({ name: JSON_TOOL, description: format.json_schema.description ?? `Give the answer as ${format.json_schema.name}`, input_schema: format.json_schema.schema ?? { type: 'object' } })
    toolChoice = { type: 'tool', name: JSON_TOOL }
  }
  if (tools.length > 0) body.tools = tools
  if (toolChoice && (tools.length > 0 || toolChoice.type === 'none')) body.tool_choice = toolChoice
  if (stream) body.stream = true
  return body
}

/**
 * Anthropic's usage in OpenAI's terms: its `input_tokens` leave out the tokens read from and
 * written to the prompt cache, which OpenAI's `prompt_tokens` count (the read ones as `cached_tokens`).
 */
export function anthropicUsage(raw: any): ChatUsage {
  const count = (value: unknown) => (Number.isFinite(Number(value)) && Number(value) > 0 ? Math.floor(Number(value)) : 0)
  const cached = count(raw?.cache_read_input_tokens)
  const prompt = count(raw?.input_tokens) + cached + count(raw?.cache_creation_input_tokens)
  const completion = count(raw?.output_tokens)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}) }
}

/** The headers of a request to Anthropic: its extra headers, the API version and the key. */
export function anthropicHeaders(provider: ProviderConfig, stream = false): Record<string, string> {
  return {
    ...provider.headers,
    'anthropic-version': provider.anthropicVersion,
    ...(provider.apiKey ? { 'x-api-key': provider.apiKey } : {}),
    ...(stream ? { accept: 'text/event-stream' } : {}),
  }
}

function post(call: UpstreamCall, stream: boolean) {
  const { provider } = call.target
  return postUpstream({
    url: `${provider.baseUrl}/v1/messages`,
    headers: anthropicHeaders(provider, stream),
    body: anthropicBody(call, stream),
    timeoutMs: call.target.timeoutMs,
    signal: call.signal,
    dispatcher: call.dispatcher,
    label: label(call),
  })
}

/** Tracks the content blocks of a streamed message: which are tool calls, and their OpenAI index. */
async function* deltas(events: AsyncIterable<{ event?: string; data: string }>, name: string): AsyncIterable<Delta> {
  let stopped = false
  let startUsage: any = {}
  /** Content block index → what it is: a tool call (with its position among the tool calls) or the JSON answer. */
  const blocks = new Map<number, { kind: 'tool'; call: number } | { kind: 'json' }>()
  let calls = 0
  let jsonAnswer = false
  for await (const event of events) {
    if (stopped) continue
    let data: any
    try {
      data = JSON.parse(event.data)
    } catch {
      throw new UpstreamError('protocol', `${name} sent a stream event that is not JSON`)
    }
    const type = data?.type ?? event.event
    if (type === 'error') {
      const overloaded = data?.error?.type === 'overloaded_error'
      throw new UpstreamError(overloaded ? 'network' : 'protocol', `${name} reported an error mid-stream: ${data?.error?.message ?? 'unknown error'}`)
    } else if (type === 'message_start') {
      startUsage = data?.message?.usage ?? {}
    } else if (type === 'content_block_start') {
      const block = data?.content_block
      if (block?.type === 'tool_use' && block.name === JSON_TOOL) {
        blocks.set(data.index, { kind: 'json' })
        jsonAnswer = true
      } else if (block?.type === 'tool_use') {
        const call = calls++
        blocks.set(data.index, { kind: 'tool', call })
        yield { toolCalls: [{ index: call, id: String(block.id), type: 'function', function: { name: String(block.name), arguments: '' } }] }
      }
    } else if (type === 'content_block_delta') {
      const delta = data?.delta
      if (delta?.type === 'text_delta' && delta.text) yield { content: delta.text }
      else if (delta?.type === 'thinking_delta' && delta.thinking) yield { reasoning: delta.thinking }
      else if (delta?.type === 'input_json_delta' && delta.partial_json) {
        const block = blocks.get(data.index)
        if (block?.kind === 'json') yield { content: delta.partial_json }
        else if (block?.kind === 'tool') yield { toolCalls: [{ index: block.call, function: { arguments: delta.partial_json } }] }
      }
    } else if (type === 'message_delta') {
      // message_delta's counts are the whole message's so far; those it leaves out stand as message_start gave them.
      const usage = { ...startUsage }
      for (const [field, value] of Object.entries(data?.usage ?? {})) if (value !== null && value !== undefined) usage[field] = value
      const reason = finishReasonOf(data?.delta?.stop_reason)
      yield { finishReason: jsonAnswer && reason === 'tool_calls' ? 'stop' : reason, usage: anthropicUsage(usage) }
    } else if (type === 'message_stop') {
      stopped = true
    }
  }
  if (!stopped) throw new UpstreamError('network', `${name} ended the stream before finishing`)
}

export const anthropicProvider: Provider = {
  async complete(call) {
    const response = await post(call, false)
    const data = await response.json()
    if (!Array.isArray(data?.content)) throw new UpstreamError('protocol', `${label(call)} answered without content`)
    const blocks: any[] = data.content
    const json = blocks.find((b) => b?.type === 'tool_use' && b.name === JSON_TOOL)
    const toolCalls: ToolCall[] = blocks
      .filter((b) => b?.type === 'tool_use' && b.name !== JSON_TOOL)
      .map((b) => ({ id: String(b.id), type: 'function' as const, function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } }))
    const text = json ? JSON.stringify(json.input ?? {}) : blocks.filter((b) => b?.type === 'text').map((b) => b.text).join('')
    const reason = finishReasonOf(data.stop_reason)
    const completion: Completion = {
      choices: [
        {
          index: 0,
          content: text === '' && toolCalls.length > 0 ? null : text,
          reasoning: blocks.filter((b) => b?.type === 'thinking').map((b) => b.thinking).join(''),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          finishReason: json && reason === 'tool_calls' ? 'stop' : reason,
        },
      ],
      usage: anthropicUsage(data.usage),
      upstreamRequestId: response.requestId,
    }
    return completion
  },

  async stream(call) {
    const response = await post(call, true)
    return { deltas: deltas(response.events(), label(call)), upstreamRequestId: response.requestId }
  },
}
