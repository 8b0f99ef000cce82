/**
 * Inputs of the three chat operations of spec/utility-api.md: /api/v1/chat/completions,
 * /api/chaty and /api/reasoning-70b. Shared by the REST handlers and the CLI.
 */
import { z } from 'zod'

/** The `model` values /api/v1/chat/completions accepts (spec): aliases the operator maps to real models. */
export const CHAT_MODEL_ALIASES = [
  'modelg-4o-mini',
  'o1-preview',
  'o1-mini',
  'modelg-4-turbo-2024-04-09',
  'modelg-4o-2024-08-06',
  'modelx-2',
  'modelx-2-mini',
  'modelc-3-opus-20240229',
  'modelc-3-sonnet-20240229',
  'modelc-3-5-sonnet-20240620',
  'modelc-3-5-sonnet-20241022',
  'modelc-3-5-sonnet-20241022-t',
  'modelc-3-haiku-20240307',
] as const
export type ChatModelAlias = (typeof CHAT_MODEL_ALIASES)[number]

/** The two fixed operations; each is served by the model the operator maps to its name. */
export const CHAT_OPERATIONS = ['chaty', 'reasoning-70b'] as const
export type ChatOperation = (typeof CHAT_OPERATIONS)[number]

/** The alias used when a completions request names no model (the spec makes every field optional). */
export const DEFAULT_CHAT_ALIAS: ChatModelAlias = 'modelg-4o-mini'

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const
export type ChatRole = (typeof CHAT_ROLES)[number]

/** OpenAI clients may send content as text parts; only text is accepted, joined into one string. */
const textPart = z.object({
  type: z.literal('text', { error: 'only text content parts ({type: "text", text}) are accepted' }),
  text: z.string({ error: 'text must be a string' }),
})

export const chatMessage = z.object({
  role: z.enum(CHAT_ROLES, { error: `must be one of ${CHAT_ROLES.join(', ')}` }),
  content: z
    .union([z.string(), z.array(textPart)], { error: 'must be a string' })
    .transform((c) => (typeof c === 'string' ? c : c.map((p) => p.text).join(''))),
})
export type ChatMessage = z.output<typeof chatMessage>

export const chatMessages = z
  .array(chatMessage, { error: (issue) => (issue.input === undefined || issue.input === null ? 'messages is required' : 'messages must be an array of {role, content} objects') })
  .min(1, 'messages must hold at least one message')
  .max(1000, 'messages may hold at most 1000 messages')
  .refine((list) => list.some((m) => m.role !== 'system'), 'messages must hold at least one user or assistant message')

/** Absent and null both mean "not set" (OpenAI clients send null for unset fields). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === null ? undefined : v), schema.optional())

const maxTokens = (name: string) =>
  z.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).min(1, `${name} must be at least 1`).max(1_000_000, `${name} must be at most 1000000`)

/**
 * Sampling fields of the reasoning operation (spec), accepted on all three operations.
 * Ranges are the widest any supported provider accepts; providers that lack a field never receive it.
 */
export const samplingFields = {
  max_tokens: optional(maxTokens('max_tokens')),
  /** OpenAI's newer name for max_tokens; either may be sent. */
  max_completion_tokens: optional(maxTokens('max_completion_tokens')),
  temperature: optional(z.number({ error: 'temperature must be a number' }).min(0, 'temperature must be from 0 to 2').max(2, 'temperature must be from 0 to 2')),
  top_p: optional(z.number({ error: 'top_p must be a number' }).gt(0, 'top_p must be greater than 0 and at most 1').max(1, 'top_p must be greater than 0 and at most 1')),
  top_k: optional(z.number({ error: 'top_k must be a number' }).int('top_k must be a whole number').min(1, 'top_k must be from 1 to 1000').max(1000, 'top_k must be from 1 to 1000')),
  repetition_penalty: optional(
    z.number({ error: 'repetition_penalty must be a number' }).gt(0, 'repetition_penalty must be greater than 0 and at most 2').max(2, 'repetition_penalty must be greater than 0 and at most 2'),
  ),
  stop: optional(
    z
      .union([z.string(), z.array(z.string({ error: 'stop must hold strings' }))], { error: 'stop must be a string or an array of strings' })
      .transform((s) => (typeof s === 'string' ? [s] : s))
      .refine((s) => s.length <= 4, 'stop may hold at most 4 sequences')
      .refine((s) => s.every((x) => x.length > 0 && x.length <= 200), 'stop sequences must be 1 to 200 characters'),
  ),
  stream: optional(z.boolean({ error: 'stream must be true or false' })),
}


/** POST /api/v1/chat/completions. Unknown OpenAI fields are ignored so that OpenAI clients work unchanged. */
export const chatCompletionInput = z.object({
  model: z.preprocess(
    (v) => (v === null ? undefined : v),
    z.enum(CHAT_MODEL_ALIASES, { error: `model must be one of ${CHAT_MODEL_ALIASES.join(', ')}` }).default(DEFAULT_CHAT_ALIAS),
  ),
  messages: chatMessages,
  ...samplingFields,
}, { error: 'Request body must be a JSON object' })
export type ChatCompletionInput = z.output<typeof chatCompletionInput>

/** POST /api/chaty and /api/reasoning-70b: the model is fixed by the operation; a `model` field is ignored. */
export const chatOperationInput = z.object({
  messages: chatMessages,
  ...samplingFields,
}, { error: 'Request body must be a JSON object' })
export type ChatOperationInput = z.output<typeof chatOperationInput>

/** Sampling settings after validation, as the gateway forwards them. */
export interface Sampling {
  max_tokens?: number
  temperature?: number
  top_p?: number
  top_k?: number
  repetition_penalty?: number
  stop?: string[]
}

export function samplingOf(input: ChatOperationInput): Sampling {
  const sampling: Sampling = {
    max_tokens: input.max_completion_tokens ?? input.max_tokens,
    temperature: input.temperature,
    top_p: input.top_p,
    top_k: input.top_k,
    repetition_penalty: input.repetition_penalty,
    stop: input.stop,
  }
  for (const key of Object.keys(sampling) as Array<keyof Sampling>) if (sampling[key] === undefined) delete sampling[key]
  return sampling
}

export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}
