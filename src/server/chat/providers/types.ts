import type { Dispatcher } from 'undici'
import type { ChatMessage, ChatParams, ChatUsage, ToolCall } from '../../../shared/schemas/chat.js'
import type { Target } from '../config.js'

/** One call to one provider, in OpenAI's chat vocabulary; each provider translates it to its own wire format. */
export interface UpstreamCall {
  target: Target
  messages: ChatMessage[]
  /** Every other request field (validated ones and unknown extras), the target's own defaults under them. */
  params: ChatParams
  /** Aborted when the client goes away. */
  signal: AbortSignal
  dispatcher: Dispatcher
}

/** One choice of a complete answer. */
export interface CompletionChoice {
  index: number
  /** The text as the provider produced it (a `<think>` block included); null when it only called tools. */
  content: string | null
  /** Reasoning the provider gave separately from the content (DeepSeek's reasoning_content, Anthropic's thinking). */
  reasoning: string
  toolCalls?: ToolCall[]
  refusal?: string | null
  logprobs?: unknown
  finishReason: string
}

export interface Completion {
  choices: CompletionChoice[]
  usage?: ChatUsage
  systemFingerprint?: string
  /** The upstream's own request id (its `x-request-id`), echoed to the client. */
  upstreamRequestId?: string
}

/** A piece of one tool call of a streamed answer: the first names it, the rest add to its arguments. */
export interface ToolCallDelta {
  index: number
  id?: string
  type?: 'function'
  function?: { name?: string; arguments?: string }
}

/** A piece of a streamed answer, for choice `index` (0 when absent); any field may be absent. */
export interface Delta {
  index?: number
  content?: string
  reasoning?: string
  toolCalls?: ToolCallDelta[]
  refusal?: string
  logprobs?: unknown
  finishReason?: string
  usage?: ChatUsage
}

/** A streamed answer: its pieces, and the upstream's request id. */
export interface DeltaStream {
  deltas: AsyncIterable<Delta>
  upstreamRequestId?: string
}

export interface Provider {
  complete(call: UpstreamCall): Promise<Completion>
  /**
   * Starts a streamed answer. Failures before the upstream answers with success are thrown from
   * here; failures after that (a cut stream, a timeout between chunks) from the iterator.
   */
  stream(call: UpstreamCall): Promise<DeltaStream>
}
