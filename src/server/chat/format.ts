/** Plaza's chat answers in OpenAI's shapes (shared by the HTTP handlers and the embedded CLI). */
import type { ChatResult } from './gateway.js'

/** The non-streamed answer: OpenAI's chat.completion (every choice) plus Plaza's message / reasoning / answer of the first. */
export function completionBody(result: ChatResult) {
  return {
    id: result.id,
    object: 'chat.completion' as const,
    created: result.created,
    model: result.model,
    choices: result.choices.map((choice) => ({
      index: choice.index,
      message: {
        role: 'assistant' as const,
        content: choice.content,
        ...(choice.reasoning ? { reasoning_content: choice.reasoning } : {}),
        ...(choice.toolCalls ? { tool_calls: choice.toolCalls } : {}),
        refusal: choice.refusal ?? null,
      },
      logprobs: choice.logprobs ?? null,
      finish_reason: choice.finishReason,
    })),
    usage: result.usage ?? null,
    ...(result.systemFingerprint ? { system_fingerprint: result.systemFingerprint } : {}),
    message: result.message,
    reasoning: result.reasoning,
    answer: result.answer,
  }
}

export type CompletionBody = ReturnType<typeof completionBody>
