/**
 * Anthropic's Messages API, translated to and from OpenAI's chat format: system messages go to the
 * top-level `system`, `max_tokens` is always sent (Anthropic requires it), `stop` becomes
 * `stop_sequences`, temperature is clamped to Anthropic's 0..1, `top_k` is passed and
 * `repetition_penalty` (which Anthropic lacks) is dropped. Thinking blocks become reasoning.
 */
import type { ChatUsage } from '../../../shared/schemas/chat.js'
import { UpstreamError } from '../errors.js'
import { postUpstream } from './http.js'
import { label } from './openai.js'
import type { Completion, Delta, Provider, UpstreamCall } from './types.js'

const FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls', refusal: 'content_filter' }

function finishReasonOf(stopReason: string | null | undefined): string {
  return (stopReason && FINISH[stopReason]) ?? 'stop'
}

export function anthropicBody(call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const { target, sampling } = call
  const system = call.messages.filter((m) => m.role === 'system').map((m) => m.content)
  const body: Record<string, unknown> = {
    model: target.model,
    max_tokens: sampling.max_tokens ?? target.defaultMaxTokens,
    messages: call.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
  }
  if (system.length > 0) body.system = system.join('\n\n')
  if (sampling.temperature !== undefined) body.temperature = Math.min(sampling.temperature, 1)
  if (sampling.top_p !== undefined) body.top_p = sampling.top_p
  if (sampling.top_k !== undefined && target.provider.extendedSampling) body.top_k = sampling.top_k
  if (sampling.stop !== undefined) body.stop_sequences = sampling.stop
  if (stream) body.stream = true
  return body
}

function usageOf(input: number, output: number): ChatUsage {
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
}

function post(call: UpstreamCall, stream: boolean) {
  const { provider } = call.target
  return postUpstream({
    url: `${provider.baseUrl}/v1/messages`,
    headers: {
      ...provider.headers,
      'anthropic-version': provider.anthropicVersion,
      ...(provider.apiKey ? { 'x-api-key': provider.apiKey } : {}),
      ...(stream ? { accept: 'text/event-stream' } : {}),
    },
    body: anthropicBody(call, stream),
    timeoutMs: provider.timeoutMs,
    signal: call.signal,
    dispatcher: call.dispatcher,
    label: label(call),
  })
}

async function* deltas(events: AsyncIterable<{ event?: string; data: string }>, name: string): AsyncIterable<Delta> {
  let stopped = false
  let inputTokens = 0
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
      inputTokens = Number(data?.message?.usage?.input_tokens ?? 0)
    } else if (type === 'content_block_delta') {
      const delta = data?.delta
      if (delta?.type === 'text_delta' && delta.text) yield { content: delta.text }
      else if (delta?.type === 'thinking_delta' && delta.thinking) yield { reasoning: delta.thinking }
    } else if (type === 'message_delta') {
      const outputTokens = Number(data?.usage?.output_tokens ?? 0)
      yield { finishReason: finishReasonOf(data?.delta?.stop_reason), usage: usageOf(inputTokens, outputTokens) }
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
    const completion: Completion = {
      content: data.content
        .filter((b: any) => b?.type === 'text')
        .map((b: any) => b.text)
        .join(''),
      reasoning: data.content
        .filter((b: any) => b?.type === 'thinking')
        .map((b: any) => b.thinking)
        .join(''),
      finishReason: finishReasonOf(data.stop_reason),
      usage: usageOf(Number(data.usage?.input_tokens ?? 0), Number(data.usage?.output_tokens ?? 0)),
    }
    return completion
  },

  async stream(call) {
    const response = await post(call, true)
    return deltas(response.events(), label(call))
  },
}
