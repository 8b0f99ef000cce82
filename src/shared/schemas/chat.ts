/**
 * Inputs of the chat operations of spec/utility-api.md: /api/v1/chat/completions (OpenAI's whole
 * request), /api/chaty and /api/reasoning-70b. Shared by the REST handlers and the CLI.
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

/** The catalog's gateway operations (decisions §6), each served by the model mapped to its name. */
export const GATEWAY_ALIASES = ['copilot', 'llama-70b', 'reasoning-small', 'gpt', 'coder', 'chat', 'online'] as const
export type GatewayAlias = (typeof GATEWAY_ALIASES)[number]

/** The alias used when a completions request names no model (the spec makes every field optional). */
export const DEFAULT_CHAT_ALIAS: ChatModelAlias = 'modelg-4o-mini'

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const
export type ChatRole = (typeof CHAT_ROLES)[number]

/** Absent and null both mean "not set" (OpenAI clients send null for unset fields). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === null ? undefined : v), schema.optional())

const textPart = z.looseObject({ type: z.literal('text'), text: z.string({ error: 'a text part needs text' }) })
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: z.string({ error: 'an image_url part needs image_url.url' }).regex(/^(https?:|data:image\/)/i, 'image_url.url must be an http(s) URL or a data:image/... URL'),
    detail: optional(z.enum(['auto', 'low', 'high'])),
  }),
})
const audioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string({ error: 'input_audio.data must be base64 text' }), format: z.string({ error: 'input_audio.format is required (wav, mp3)' }) }),
})
const filePart = z.looseObject({ type: z.literal('file'), file: z.looseObject({}) })
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() })

const PARTS = 'content parts are {type: "text"}, {type: "image_url"}, {type: "input_audio"} or {type: "file"}'
const userPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart], { error: PARTS })
const textContent = z.union([z.string(), z.array(textPart)], { error: 'content must be a string or an array of text parts' })

export type ContentPart = z.output<typeof userPart>

const toolCall = z.looseObject({
  id: z.string({ error: 'a tool call needs an id' }).min(1),
  type: z.literal('function').default('function'),
  function: z.looseObject({ name: z.string({ error: 'a tool call needs function.name' }).min(1), arguments: z.string({ error: 'function.arguments must be a JSON string' }) }),
})
export type ToolCall = z.output<typeof toolCall>

const name = optional(z.string().max(256))

/** OpenAI's message shapes, every role; unknown fields are kept and forwarded to OpenAI-compatible upstreams. */
export const chatMessage = z.discriminatedUnion(
  'role',
  [
    z.looseObject({ role: z.literal('system'), content: textContent, name }),
    z.looseObject({ role: z.literal('developer'), content: textContent, name }),
    z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart).min(1, 'content must hold at least one part')], { error: `content must be a string or an array of parts (${PARTS})` }), name }),
    z.looseObject({
      role: z.literal('assistant'),
      content: optional(z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart]))], { error: 'content must be a string or an array of text parts' })),
      name,
      refusal: optional(z.string()),
      tool_calls: optional(z.array(toolCall).max(128, 'at most 128 tool calls per message')),
    }),
    z.looseObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string({ error: 'a tool message needs tool_call_id' }).min(1) }),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? `role must be one of ${CHAT_ROLES.join(', ')}` : 'each message must be an object with a role') },
)
export type ChatMessage = z.output<typeof chatMessage>

export const chatMessages = z
  .array(chatMessage, { error: (issue) => (issue.input === undefined || issue.input === null ? 'messages is required' : 'messages must be an array of {role, content} objects') })
  .min(1, 'messages must hold at least one message')
  .max(1000, 'messages may hold at most 1000 messages')
  .refine((list) => list.some((m) => m.role !== 'system' && m.role !== 'developer'), 'messages must hold at least one user or assistant message')

const maxTokens = (name: string) =>
  z.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).min(1, `${name} must be at least 1`).max(1_000_000, `${name} must be at most 1000000`)
const between = (name: string, min: number, max: number) =>
  z.number({ error: `${name} must be a number` }).min(min, `${name} must be from ${min} to ${max}`).max(max, `${name} must be from ${min} to ${max}`)

const tool = z.looseObject({
  type: z.literal('function', { error: 'tools must be {type: "function", function: {name, description?, parameters?}}' }),
  function: z.looseObject({
    name: z.string({ error: 'a tool needs function.name' }).regex(/^[A-Za-z0-9_-]{1,64}$/, 'function.name is 1-64 letters, digits, _ or -'),
    description: optional(z.string()),
    parameters: optional(z.record(z.string(), z.unknown())),
    strict: optional(z.boolean()),
  }),
})
export type ChatTool = z.output<typeof tool>

const toolChoice = z.union(
  [z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) })],
  { error: 'tool_choice must be none, auto, required or {type: "function", function: {name}}' },
)
export type ToolChoice = z.output<typeof toolChoice>

const responseFormat = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({
      type: z.literal('json_schema'),
      json_schema: z.looseObject({ name: z.string().min(1), description: optional(z.string()), schema: optional(z.record(z.string(), z.unknown())), strict: optional(z.boolean()) }),
    }),
  ],
  { error: 'response_format must be {type: "text"}, {type: "json_object"} or {type: "json_schema", json_schema: {name, schema}}' },
)
export type ResponseFormat = z.output<typeof responseFormat>

/**
 * Every request field of OpenAI's chat completions besides `model` and `messages`, validated where
 * Plaza reads it or a wrong value would only fail upstream later; fields it does not know are kept
 * and forwarded to OpenAI-compatible upstreams (vendor extensions, newer OpenAI fields).
 */
export const chatParamFields = {
  max_tokens: optional(maxTokens('max_tokens')),
  /** OpenAI's newer name for max_tokens; either may be sent. */
  max_completion_tokens: optional(maxTokens('max_completion_tokens')),
  temperature: optional(between('temperature', 0, 2)),
  top_p: optional(z.number({ error: 'top_p must be a number' }).gt(0, 'top_p must be greater than 0 and at most 1').max(1, 'top_p must be greater than 0 and at most 1')),
  top_k: optional(z.number({ error: 'top_k must be a number' }).int('top_k must be a whole number').min(1, 'top_k must be from 1 to 1000').max(1000, 'top_k must be from 1 to 1000')),
  repetition_penalty: optional(
    z.number({ error: 'repetition_penalty must be a number' }).gt(0, 'repetition_penalty must be greater than 0 and at most 2').max(2, 'repetition_penalty must be greater than 0 and at most 2'),
  ),
  presence_penalty: optional(between('presence_penalty', -2, 2)),
  frequency_penalty: optional(between('frequency_penalty', -2, 2)),
  stop: optional(
    z
      .union([z.string(), z.array(z.string({ error: 'stop must hold strings' }))], { error: 'stop must be a string or an array of strings' })
      .transform((s) => (typeof s === 'string' ? [s] : s))
      .refine((s) => s.length <= 4, 'stop may hold at most 4 sequences')
      .refine((s) => s.every((x) => x.length > 0 && x.length <= 200), 'stop sequences must be 1 to 200 characters'),
  ),
  n: optional(z.number({ error: 'n must be a number' }).int('n must be a whole number').min(1, 'n must be from 1 to 16').max(16, 'n must be from 1 to 16')),
  seed: optional(z.number({ error: 'seed must be a number' }).int('seed must be a whole number')),
  logprobs: optional(z.boolean({ error: 'logprobs must be true or false' })),
  top_logprobs: optional(z.number({ error: 'top_logprobs must be a number' }).int().min(0, 'top_logprobs must be from 0 to 20').max(20, 'top_logprobs must be from 0 to 20')),
  logit_bias: optional(z.record(z.string(), z.number())),
  tools: optional(z.array(tool, { error: 'tools must be an array of {type: "function", function}' }).max(128, 'tools may hold at most 128 tools')),
  tool_choice: optional(toolChoice),
  parallel_tool_calls: optional(z.boolean({ error: 'parallel_tool_calls must be true or false' })),
  response_format: optional(responseFormat),
  user: optional(z.string({ error: 'user must be a string' }).max(256)),
  stream: optional(z.boolean({ error: 'stream must be true or false' })),
  stream_options: optional(z.looseObject({ include_usage: optional(z.boolean()) })),
}

const modelName = z.preprocess(
  (v) => (v === null ? undefined : v),
  z.string({ error: 'model must be a string' }).min(1, 'model must not be empty').max(256, 'model is at most 256 characters').default(DEFAULT_CHAT_ALIAS),
)

/** POST /api/v1/chat/completions: OpenAI's request; `model` is any name the gateway serves (GET /api/v1/models). */
export const chatCompletionInput = z.looseObject({ model: modelName, messages: chatMessages, ...chatParamFields }, { error: 'Request body must be a JSON object' })
export type ChatCompletionInput = z.output<typeof chatCompletionInput>

/** GET /api/v1/models/{id}. */
export const modelIdInput = z.object({ id: z.string().min(1).max(256) })

/** POST /api/chaty and /api/reasoning-70b: the model is fixed by the operation; a `model` field is ignored. */
export const chatOperationInput = z.looseObject({ messages: chatMessages, ...chatParamFields }, { error: 'Request body must be a JSON object' })
export type ChatOperationInput = z.output<typeof chatOperationInput>

/**
 * What goes upstream besides model and messages: the validated fields and any unknown ones.
 * `stream`, `stream_options` and `model` are the gateway's to set.
 */
export type ChatParams = Omit<z.output<z.ZodObject<typeof chatParamFields>>, 'stream' | 'stream_options'> & { [extra: string]: unknown }

/** The sampling settings the CLI sets (a subset of ChatParams). */
export type Sampling = Pick<ChatParams, 'max_tokens' | 'temperature' | 'top_p' | 'top_k' | 'repetition_penalty' | 'stop'>

/** The request's parameters without the fields the gateway itself decides, and without unset ones. */
export function paramsOf(input: ChatOperationInput | ChatCompletionInput): ChatParams {
  const { messages: _messages, stream: _stream, stream_options: _options, model: _model, ...rest } = input as ChatCompletionInput
  const params: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) params[key] = value
  return params as ChatParams
}

/** OpenAI's usage: `prompt_tokens` counts cached ones too (`prompt_tokens_details.cached_tokens` of them). */
export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: { cached_tokens?: number }
  completion_tokens_details?: { reasoning_tokens?: number }
}

/** The longest single message the query-string operations take (a URL carries no more in practice). */
export const QUERY_CONTENT_MAX = 8000

const queryText = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(QUERY_CONTENT_MAX, `${field} is at most ${QUERY_CONTENT_MAX} characters`)

/** A query-string number ("256"): whole, within bounds. */
const queryInt = (field: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${field} must be a number` })
    .int(`${field} must be a whole number`)
    .min(min, `${field} must be from ${min} to ${max}`)
    .max(max, `${field} must be from ${min} to ${max}`)

/** GET /api/reasoning-small and /api/gpt: one user message in the query. */
export const chatQueryInput = z.object({ content: queryText('content'), system: queryText('system').optional() })
export type ChatQueryInput = z.output<typeof chatQueryInput>

/** GET /api/coder: a prompt and an optional answer length; the answer is plain text, as the original's. */
export const coderInput = z.object({ prompt: queryText('prompt'), maxTokens: queryInt('maxTokens', 1, 32_000).optional() })
export type CoderInput = z.output<typeof coderInput>

/** Conversation ids are handed out by Plaza: 22 URL-safe characters (128 random bits). */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{22}$/
const conversationId = z.string({ error: 'conversationId must be a string' }).regex(CONVERSATION_ID, 'conversationId must be an id this server handed out (22 letters, digits, _ or -)')

/** GET /api/chat (query) and POST /api/chat (JSON body): a message, and the conversation it continues. */
export const conversationInput = z.object(
  {
    content: queryText('content'),
    conversationId: z.preprocess((v) => (v === null || v === '' ? undefined : v), conversationId.optional()),
    /** Sent first in a new conversation only (later ones keep the one they started with). */
    system: z.preprocess((v) => (v === null ? undefined : v), queryText('system').optional()),
  },
  { error: 'Request body must be a JSON object' },
)
export type ConversationInput = z.output<typeof conversationInput>
