/**
 * Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, Groq, DeepSeek,
 * OpenRouter, LiteLLM...). The request is already in OpenAI's vocabulary; what changes per
 * family is which fields the upstream accepts.
 */
import type { ChatMessage, ChatUsage } from '../../../shared/schemas/chat.js'
import { UpstreamError } from '../errors.js'
import { postUpstream } from './http.js'
import type { Completion, Delta, Provider, UpstreamCall } from './types.js'

/** o1-style models take no system role: its text leads the first user message instead. */
export function foldSystemMessages(messages: ChatMessage[]): ChatMessage[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content)
  if (system.length === 0) return messages
  const rest = messages.filter((m) => m.role !== 'system')
  const firstUser = rest.findIndex((m) => m.role === 'user')
  const instructions = system.join('\n\n')
  if (firstUser < 0) return [{ role: 'user', content: instructions }, ...rest]
  return rest.map((m, i) => (i === firstUser ? { role: 'user', content: `${instructions}\n\n${m.content}` } : m))
}

/** The request body for a call; exported for the unit tests of the translation. */
export function openaiBody(call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const { target, sampling } = call
  const reasoningFamily = target.family === 'o1'
  const body: Record<string, unknown> = {
    model: target.model,
    messages: reasoningFamily ? foldSystemMessages(call.messages) : call.messages,
  }
  if (sampling.max_tokens !== undefined) body[reasoningFamily ? 'max_completion_tokens' : 'max_tokens'] = sampling.max_tokens
  // o1-style models accept only their fixed sampling; sending temperature, top_p or stop is an error there.
  if (!reasoningFamily) {
    if (sampling.temperature !== undefined) body.temperature = sampling.temperature
    if (sampling.top_p !== undefined) body.top_p = sampling.top_p
    if (sampling.stop !== undefined) body.stop = sampling.stop
    if (target.provider.extendedSampling) {
      if (sampling.top_k !== undefined) body.top_k = sampling.top_k
      if (sampling.repetition_penalty !== undefined) body.repetition_penalty = sampling.repetition_penalty
    }
  }
  if (stream) {
    body.stream = true
    body.stream_options = { include_usage: true }
  }
  return body
}

function usageOf(raw: any): ChatUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const prompt = Number(raw.prompt_tokens ?? 0)
  const completion = Number(raw.completion_tokens ?? 0)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(raw.total_tokens ?? prompt + completion) }
}

/** DeepSeek and vLLM say `reasoning_content`, OpenRouter and newer vLLM `reasoning`. */
function reasoningOf(message: any): string {
  const value = message?.reasoning_content ?? message?.reasoning
  return typeof value === 'string' ? value : ''
}

export function label(call: UpstreamCall): string {
  return `provider "${call.target.provider.name}" (${call.target.model})`
}

function post(call: UpstreamCall, stream: boolean) {
  const { provider } = call.target
  return postUpstream({
    url: `${provider.baseUrl}/chat/completions`,
    headers: {
      ...provider.headers,
      ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
      ...(stream ? { accept: 'text/event-stream' } : {}),
    },
    body: openaiBody(call, stream),
    timeoutMs: provider.timeoutMs,
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
    const choice = data?.choices?.[0]
    const delta: Delta = {}
    if (typeof choice?.delta?.content === 'string' && choice.delta.content) delta.content = choice.delta.content
    const reasoning = reasoningOf(choice?.delta)
    if (reasoning) delta.reasoning = reasoning
    if (choice?.finish_reason) {
      delta.finishReason = choice.finish_reason
      finished = true
    }
    const usage = usageOf(data?.usage)
    if (usage) delta.usage = usage
    if (Object.keys(delta).length > 0) yield delta
  }
  // A stream that just stops, without [DONE] or a finish reason, was cut off: never pass it off as complete.
  if (!done && !finished) throw new UpstreamError('network', `${name} ended the stream before finishing`)
}

export const openaiProvider: Provider = {
  async complete(call) {
    const response = await post(call, false)
    const data = await response.json()
    const choice = data?.choices?.[0]
    if (!choice || typeof choice.message !== 'object') throw new UpstreamError('protocol', `${label(call)} answered without choices`)
    const completion: Completion = {
      content: typeof choice.message.content === 'string' ? choice.message.content : '',
      reasoning: reasoningOf(choice.message),
      finishReason: choice.finish_reason ?? 'stop',
      usage: usageOf(data.usage),
    }
    return completion
  },

  async stream(call) {
    const response = await post(call, true)
    return deltas(response.events(), label(call))
  },
}
