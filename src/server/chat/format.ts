/** Plaza's chat answers in OpenAI's shapes (shared by the HTTP handlers and the embedded CLI). */
import type { ChatResult } from './gateway.js'

/** The non-streamed answer: OpenAI's chat.completion plus Plaza's message / reasoning / answer. */
export function completionBody(result: ChatResult) {
  return {
    id: result.id,
    object: 'chat.completion' as const,
    created: result.created,
    model: result.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: result.answer, ...(result.reasoning ? { reasoning_content: result.reasoning } : {}), refusal: null },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: result.usage ?? null,
    message: result.message,
    reasoning: result.reasoning,
    answer: result.answer,
  }
}

export type CompletionBody = ReturnType<typeof completionBody>
