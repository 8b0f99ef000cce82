/**
 * Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, Groq, DeepSeek,
 * OpenRouter, LiteLLM...). The request is already in OpenAI's vocabulary and goes up whole, unknown
 * fields included; what changes per family is which fields the upstream accepts.
 */
import type { ChatMessage, ChatUsage, ToolCall } from '../../../shared/schemas/chat.js'
import type { ProviderConfig } from '../config.js'
import { UpstreamError } from '../errors.js'
import { postUpstream } from './http.js'
import type { Completion, CompletionChoice, Delta, Provider, ToolCallDelta, UpstreamCall } from './types.js'

/** The text of a system message, whether a string or text parts. */
function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('')
}

/** o1-style models take no system role: its text leads the first user message instead. */
export function foldSystemMessages(messages: ChatMessage[]): ChatMessage[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => textOf(m.content))
  if (system.length === 0) return messages
  const rest = messages.filter((m) => m.role !== 'system')
  const firstUser = rest.findIndex((m) => m.role === 'user')
  const instructions = system.join('\n\n')
  if (firstUser < 0) return [{ role: 'user', content: instructions }, ...rest]
  return rest.map((m, i) => {
    if (i !== firstUser || m.role !== 'user') return m
    const content = typeof m.content === 'string' ? `${instructions}\n\n${m.content}` : [{ type: 'text' as const, text: instructions }, ...m.content]
    return { ...m, content }
  })
}

/** Sampling knobs o1-style models reject (they take only their fixed sampling). */
const FIXED_SAMPLING = ['temperature', 'top_p', 'stop', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias', 'top_k', 'repetition_penalty']
/** Fields only self-hosted servers (vLLM, llama.cpp, Ollama) take; OpenAI's own API rejects them. */
const EXTENDED_SAMPLING = ['top_k', 'repetition_penalty']

/** The request body for a call; exported for the unit tests of the translation. */
export function openaiBody(call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const { target } = call
  const reasoningFamily = target.family === 'o1'
  const { max_tokens, max_completion_tokens, ...params } = call.params
  const body: Record<string, unknown> = {
    ...params,
    model: target.model,
    messages: reasoningFamily ? foldSystemMessages(call.messages) : call.messages,
  }
  const limit = max_completion_tokens ?? max_tokens
  if (limit !== undefined) body[reasoningFamily ? 'max_completion_tokens' : 'max_tokens'] = limit
  if (reasoningFamily) for (const field of FIXED_SAMPLING) delete body[field]
  else if (!target.provider.extendedSampling) for (const field of EXTENDED_SAMPLING) delete body[field]
  if (stream) {
    body.stream = true
    // Usage on the last chunk whatever the client asked: the gateway records it.
    body.stream_options = { include_usage: true }
  }
  return body
}

/** OpenAI's usage, with the cached and reasoning token counts when the upstream gives them. */
export function usageOf(raw: any): ChatUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const count = (value: unknown) => (Number.isFinite(Number(value)) && Number(value) > 0 ? Math.floor(Number(value)) : 0)
  const prompt = count(raw.prompt_tokens)
  const completion = count(raw.completion_tokens)
  const usage: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: raw.total_tokens === undefined ? prompt + completion : count(raw.total_tokens) }
  const cached = count(raw.prompt_tokens_details?.cached_tokens)
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached }
  const reasoning = count(raw.completion_tokens_details?.reasoning_tokens)
  if (reasoning) usage.completion_tokens_details = { reasoning_tokens: reasoning }
  return usage
}

/** DeepSeek and vLLM say `reasoning_content`, OpenRouter and newer vLLM `reasoning`. */
function reasoningOf(message: any): string {
  const value = message?.reasoning_content ?? message?.reasoning
  return typeof value === 'string' ? value : ''
}

function toolCallsOf(raw: unknown): ToolCall[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined
  return raw
    .filter((call) => call && typeof call === 'object' && call.function)
    .map((call) => ({
      id: String(call.id ?? ''),
      type: 'function' as const,
      function: { name: String(call.function.name ?? ''), arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}) },
    }))
}

function toolCallDeltasOf(raw: unknown): ToolCallDelta[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined
  return raw.map((piece, position) => {
    const delta: ToolCallDelta = { index: Number.isInteger(piece?.index) ? piece.index : position }
    if (typeof piece?.id === 'string') delta.id = piece.id
    if (piece?.type === 'function') delta.type = 'function'
    const fn = piece?.function
    if (fn && typeof fn === 'object') {
      delta.function = {}
      if (typeof fn.name === 'string') delta.function.name = fn.name
      if (typeof fn.arguments === 'string') delta.function.arguments = fn.arguments
    }
    return delta
  })
}

export function label(call: UpstreamCall): string {
  return `provider "${call.target.provider.name}" (${call.target.model})`
}

/** The headers of a request to an OpenAI-compatible provider: its extra headers and its key. */
export function openaiHeaders(provider: ProviderConfig, stream = false): Record<string, string> {
  return {
    ...provider.headers,
    ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
    ...(stream ? { accept: 'text/event-stream' } : {}),
  }
}

function post(call: UpstreamCall, stream: boolean) {
  const { provider } = call.target
  return postUpstream({
    url: `${provider.baseUrl}/chat/completions`,
    headers: openaiHeaders(provider, stream),
    body: openaiBody(call, stream),
    timeoutMs: call.target.timeoutMs,
    signal: call.signal,
    dispatcher: call.dispatcher,
    label: label(call),
  })
}

async function* deltas(events: AsyncIterable<{ data: string }>, name: string): AsyncIterable<Delta> {
  let done = false
  let finished = false
  for await (const event of events) {
    if (done) continue // drain to the end so the connection can be reused
    if (event.data.trim() === '[DONE]') {
      done = true
      continue
    }
    let data: any
    try {
      data = JSON.parse(event.data)
    } catch {
      throw new UpstreamError('protocol', `${name} sent a stream event that is not JSON`)
    }
    if (data?.error) throw new UpstreamError('protocol', `${name} reported an error mid-stream: ${data.error.message ?? JSON.stringify(data.error)}`)
    for (const choice of Array.isArray(data?.choices) ? data.choices : []) {
      const delta: Delta = { index: Number.isInteger(choice?.index) ? choice.index : 0 }
      const piece = choice?.delta
      if (typeof piece?.content === 'string' && piece.content) delta.content = piece.content
      const reasoning = reasoningOf(piece)
      if (reasoning) delta.reasoning = reasoning
      const toolCalls = toolCallDeltasOf(piece?.tool_calls)
      if (toolCalls) delta.toolCalls = toolCalls
      if (typeof piece?.refusal === 'string' && piece.refusal) delta.refusal = piece.refusal
      if (choice?.logprobs) delta.logprobs = choice.logprobs
      if (choice?.finish_reason) {
        delta.finishReason = choice.finish_reason
        finished = true
      }
      if (Object.keys(delta).length > 1) yield delta
    }
    const usage = usageOf(data?.usage)
    if (usage) yield { usage }
  }
  // A stream that just stops, without [DONE] or a finish reason, was cut off: never pass it off as complete.
  if (!done && !finished) throw new UpstreamError('network', `${name} ended the stream before finishing`)
}

function choiceOf(raw: any, position: number): CompletionChoice {
  const message = raw.message
  const choice: CompletionChoice = {
    index: Number.isInteger(raw.index) ? raw.index : position,
    content: typeof message.content === 'string' ? message.content : null,
    reasoning: reasoningOf(message),
    finishReason: raw.finish_reason ?? 'stop',
  }
  const toolCalls = toolCallsOf(message.tool_calls)
  if (toolCalls) choice.toolCalls = toolCalls
  if (typeof message.refusal === 'string') choice.refusal = message.refusal
  if (raw.logprobs) choice.logprobs = raw.logprobs
  if (choice.content === null && !toolCalls) choice.content = ''
  return choice
}

export const openaiProvider: Provider = {
  async complete(call) {
    const response = await post(call, false)
    const data = await response.json()
    const choices = Array.isArray(data?.choices) ? data.choices.filter((c: any) => c && typeof c.message === 'object' && c.message) : []
    if (choices.length === 0) throw new UpstreamError('protocol', `${label(call)} answered without choices`)
    return {
      choices: choices.map(choiceOf),
      usage: usageOf(data.usage),
      ...(typeof data.system_fingerprint === 'string' ? { systemFingerprint: data.system_fingerprint } : {}),
      upstreamRequestId: response.requestId,
    }
  },

  async stream(call) {
    const response = await post(call, true)
    return { deltas: deltas(response.events(), label(call)), upstreamRequestId: response.requestId }
  },
}
