import type { Dispatcher } from 'undici'
import type { ChatMessage, ChatUsage, Sampling } from '../../../shared/schemas/chat.js'
import type { Target } from '../config.js'

/** One call to one provider, in OpenAI's chat vocabulary; each provider translates it to its own wire format. */
export interface UpstreamCall {
  target: Target
  messages: ChatMessage[]
  sampling: Sampling
  /** Aborted when the client goes away. */
  signal: AbortSignal
  dispatcher: Dispatcher
}

export interface Completion {
  content: string
  /** Reasoning the provider gave separately from the content (DeepSeek's reasoning_content, Anthropic's thinking). */
  reasoning: string
  finishReason: string
  usage?: ChatUsage
}

/** A piece of a streamed answer; any field may be absent. */
export interface Delta {
  content?: string
  reasoning?: string
  finishReason?: string
  usage?: ChatUsage
}

export interface Provider {
  complete(call: UpstreamCall): Promise<Completion>
  /**
   * Starts a streamed answer. Failures before the upstream answers with success are thrown from
   * here; failures after that (a cut stream, a timeout between chunks) from the iterator.
   */
  stream(call: UpstreamCall): Promise<AsyncIterable<Delta>>
}
