/**
 * `POST /api/agent`: the coding agent's request, its limits and the events it streams. Shared by
 * the handler, the OpenAPI document and `plaza util agent`.
 */
import { z } from 'zod'
import { chatMessages, DEFAULT_CHAT_ALIAS, type ToolCall } from './chat.js'
import { localLanguageOf, PISTON_LANGUAGES } from './execute.js'

/** Model calls per run: the default and the most a request may ask for. */
export const AGENT_DEFAULT_STEPS = 8
export const AGENT_MAX_STEPS = 16
/** A run's wall time unless `PLAZA_AGENT_TIMEOUT_MS` says otherwise. */
export const AGENT_DEFAULT_TIMEOUT_MS = 120_000
export const AGENT_PROMPT_MAX = 100_000

export const agentLanguage = z
  .string({ error: 'language must be a string, such as javascript or python' })
  .transform((value) => value.trim().toLowerCase())
  .refine((name) => localLanguageOf(name) !== null || (PISTON_LANGUAGES as readonly string[]).includes(name), {
    error: 'language is not one Plaza knows: javascript and python run here; others (go, rust, c, ...) through a Piston provider',
  })

const promptText = (name: string) =>
  z.string({ error: `${name} must be a string` }).trim().min(1, `${name} must not be empty`).max(AGENT_PROMPT_MAX, `${name} must be at most ${AGENT_PROMPT_MAX} characters`).optional()

export const agentInput = z
  .object(
    {
      prompt: promptText('prompt'),
      /** decisions §6 names the field `task`: the same as `prompt`. */
      task: promptText('task'),
      messages: chatMessages.optional(),
      model: z.string({ error: 'model must be a string' }).trim().min(1, 'model must not be empty').max(256, 'model must be at most 256 characters').default(DEFAULT_CHAT_ALIAS),
      language: agentLanguage.optional(),
      maxSteps: z
        .number({ error: 'maxSteps must be a number' })
        .int('maxSteps must be a whole number')
        .min(1, `maxSteps must be from 1 to ${AGENT_MAX_STEPS}`)
        .max(AGENT_MAX_STEPS, `maxSteps must be from 1 to ${AGENT_MAX_STEPS}`)
        .default(AGENT_DEFAULT_STEPS),
    },
    { error: 'Request body must be a JSON object' },
  )
  .refine((input) => [input.prompt, input.task, input.messages].filter((given) => given !== undefined).length === 1, { error: 'give either prompt (or task) or messages, one of them', path: ['prompt'] })
export type AgentInput = z.input<typeof agentInput>
export type AgentRequest = z.output<typeof agentInput>

export interface AgentUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

/** A tool call as the model made it (OpenAI's shape). */
export type AgentToolCall = ToolCall

/**
 * What a run streams, in order: per model call a `step`; per program the model asks for a
 * `tool_call` and its `tool_result`; then `answer` (or `error`), and `done` last.
 */
export type AgentEvent =
  | { type: 'step'; step: number; message: { role: 'assistant'; content: string | null; reasoning: string; tool_calls?: AgentToolCall[] }; finish_reason: string; usage: AgentUsage | null }
  | { type: 'tool_call'; step: number; id: string; name: string; arguments: string; language: string | null; code: string | null; stdin?: string }
  | ({ type: 'tool_result'; step: number; id: string } & (
      | { stdout: string; stderr: string; exit_code: number; timed_out: boolean; duration_ms: number; language: string }
      | { error: string }
    ))
  | { type: 'answer'; step: number; content: string; reasoning: string }
  | { type: 'error'; step: number; code: AgentErrorCode; message: string }
  | { type: 'done'; steps: number; finish: 'answer' | 'error'; usage: AgentUsage }

export type AgentErrorCode =
  | 'max_steps_reached'
  | 'timeout'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'provider_not_configured'
  | 'model_not_found'
  | 'model_not_allowed'
  | 'rate_limit_exceeded'
  | 'insufficient_quota'
  | 'invalid_request'
  | 'server_error'

/** The SSE event names, in the order a run may send them. */
export const AGENT_EVENT_TYPES = ['step', 'tool_call', 'tool_result', 'answer', 'error', 'done'] as const
