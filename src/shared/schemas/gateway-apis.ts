/**
 * Inputs of the gateway's other wire formats (docs/chat.md): OpenAI's Responses API, Anthropic's
 * Messages API, and OpenAI's embeddings, moderations, speech and transcriptions. Each is validated
 * where Plaza reads it; unknown fields are kept (they go on to a provider that speaks the same
 * format, as vendor extensions and newer fields do on chat completions).
 */
import { z } from 'zod'
import { DEFAULT_CHAT_ALIAS } from './chat.js'

/** Absent and null both mean "not set" (OpenAI's clients send null for unset fields). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === null ? undefined : v), schema.optional())

const modelName = z.string({ error: 'model must be a string' }).min(1, 'model must not be empty').max(256, 'model is at most 256 characters')
const maxTokens = (name: string) =>
  z.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).min(1, `${name} must be at least 1`).max(1_000_000, `${name} must be at most 1000000`)
const between = (name: string, min: number, max: number) =>
  z.number({ error: `${name} must be a number` }).min(min, `${name} must be from ${min} to ${max}`).max(max, `${name} must be from ${min} to ${max}`)
const functionName = z.string({ error: 'a function tool needs a name' }).regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name is 1-64 letters, digits, _ or -')
const jsonObject = z.record(z.string(), z.unknown())

/**
 * An object told apart by its `type`: a known type is checked by its own schema (so a mistake is
 * named precisely), any other type is kept as it is (for a provider that speaks the format).
 */
function byType<Known extends Record<string, z.ZodType>>(known: Known, error: string) {
  return z.looseObject({ type: z.string({ error }) }).transform((item, ctx) => {
    const schema = known[item.type] as z.ZodType | undefined
    if (!schema) return item as { type: string; [key: string]: unknown }
    const parsed = schema.safeParse(item)
    if (parsed.success) return parsed.data as z.output<Known[keyof Known]>
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path })
    return z.NEVER
  })
}

// ---------------------------------------------------------------- OpenAI's Responses API

const responseText = z.string({ error: 'text must be a string' })

/** Content parts of an input message. */
const inputContentPart = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('input_text'), text: responseText }),
    z.looseObject({
      type: z.literal('input_image'),
      image_url: optional(z.string().regex(/^(https?:|data:image\/)/i, 'image_url must be an http(s) URL or a data:image/... URL')),
      file_id: optional(z.string()),
      detail: optional(z.enum(['auto', 'low', 'high'])),
    }),
    z.looseObject({ type: z.literal('input_file'), file_data: optional(z.string()), file_id: optional(z.string()), file_url: optional(z.string()), filename: optional(z.string()) }),
    z.looseObject({ type: z.literal('input_audio'), input_audio: z.looseObject({ data: z.string(), format: z.string() }) }),
    z.looseObject({ type: z.literal('output_text'), text: responseText }),
    z.looseObject({ type: z.literal('refusal'), refusal: z.string() }),
  ],
  { error: 'message content parts are input_text, input_image, input_file, input_audio, output_text or refusal' },
)

const messageItem = z.looseObject({
  type: z.literal('message'),
  role: z.enum(['user', 'assistant', 'system', 'developer'], { error: 'a message role is user, assistant, system or developer' }),
  content: z.union([z.string(), z.array(inputContentPart).max(1000)], { error: 'a message content is a string or an array of parts' }),
  id: optional(z.string()),
  status: optional(z.string()),
})

const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string({ error: 'a function_call needs call_id' }).min(1),
  name: z.string({ error: 'a function_call needs name' }).min(1),
  arguments: z.string({ error: 'a function_call needs arguments (a JSON string)' }),
  id: optional(z.string()),
  status: optional(z.string()),
})

const functionOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string({ error: 'a function_call_output needs call_id' }).min(1),
  output: z.union([z.string(), z.array(inputContentPart)], { error: 'a function_call_output needs output (a string or parts)' }),
  id: optional(z.string()),
  status: optional(z.string()),
})

/** One input item; a bare `{role, content}` is a message (OpenAI's EasyInputMessage); other types (reasoning, item_reference, built-in tool calls) are kept for a provider that speaks the Responses API. */
export const responseInputItem = z.preprocess(
  (item) => (item && typeof item === 'object' && !Array.isArray(item) && !('type' in item) && 'role' in item ? { ...item, type: 'message' } : item),
  byType({ message: messageItem, function_call: functionCallItem, function_call_output: functionOutputItem }, 'each input item is a message ({role, content}) or an item with a type'),
)
export type ResponseInputItem = z.output<typeof responseInputItem>

const responseTool = byType(
  { function: z.looseObject({ type: z.literal('function'), name: functionName, description: optional(z.string()), parameters: optional(jsonObject), strict: optional(z.boolean()) }) },
  'tools are {type: "function", name, parameters} (or a built-in tool of the provider)',
)
export type ResponseTool = z.output<typeof responseTool>

const responseToolChoice = z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })], {
  error: 'tool_choice is none, auto, required or {type: "function", name}',
})

const textFormat = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({ type: z.literal('json_schema'), name: z.string().min(1).max(64), schema: jsonObject, description: optional(z.string()), strict: optional(z.boolean()) }),
  ],
  { error: 'text.format is {type: "text"}, {type: "json_object"} or {type: "json_schema", name, schema}' },
)

/** POST /v1/responses: OpenAI's Responses request. */
export const responsesInput = z.looseObject(
  {
    model: z.preprocess((v) => (v === null ? undefined : v), modelName.default(DEFAULT_CHAT_ALIAS)),
    input: optional(z.union([z.string(), z.array(responseInputItem).max(1000, 'input may hold at most 1000 items')], { error: 'input must be a string or an array of items' })),
    instructions: optional(z.string({ error: 'instructions must be a string' })),
    tools: optional(z.array(responseTool).max(128, 'tools may hold at most 128 tools')),
    tool_choice: optional(responseToolChoice),
    parallel_tool_calls: optional(z.boolean({ error: 'parallel_tool_calls must be true or false' })),
    text: optional(z.looseObject({ format: optional(textFormat), verbosity: optional(z.string()) })),
    max_output_tokens: optional(maxTokens('max_output_tokens')),
    temperature: optional(between('temperature', 0, 2)),
    top_p: optional(z.number({ error: 'top_p must be a number' }).gt(0, 'top_p must be greater than 0 and at most 1').max(1, 'top_p must be greater than 0 and at most 1')),
    top_logprobs: optional(z.number().int().min(0, 'top_logprobs must be from 0 to 20').max(20, 'top_logprobs must be from 0 to 20')),
    previous_response_id: optional(z.string({ error: 'previous_response_id must be a string' }).min(1).max(256)),
    store: optional(z.boolean({ error: 'store must be true or false' })),
    stream: optional(z.boolean({ error: 'stream must be true or false' })),
    metadata: optional(z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, 'metadata holds at most 16 keys')),
    user: optional(z.string({ error: 'user must be a string' }).max(256)),
    reasoning: optional(z.looseObject({ effort: optional(z.string()), summary: optional(z.string()) })),
  },
  { error: 'Request body must be a JSON object' },
)
export type ResponsesInput = z.output<typeof responsesInput>

/** GET and DELETE /v1/responses/{id}. */
export const responseIdInput = z.object({ id: z.string().min(1).max(256) })

// ---------------------------------------------------------------- Anthropic's Messages API

const cacheControl = { cache_control: optional(z.looseObject({ type: z.string() })) }
const anthropicText = z.looseObject({ type: z.literal('text'), text: z.string({ error: 'a text block needs text' }), ...cacheControl })
const anthropicImage = z.looseObject({
  type: z.literal('image'),
  source: z.discriminatedUnion(
    'type',
    [
      z.looseObject({ type: z.literal('base64'), media_type: z.string().regex(/^image\/[\w.+-]+$/, 'an image media_type is image/...'), data: z.string() }),
      z.looseObject({ type: z.literal('url'), url: z.string().regex(/^https?:/i, 'an image url must be http(s)') }),
    ],
    { error: 'an image source is {type: "base64", media_type, data} or {type: "url", url}' },
  ),
  ...cacheControl,
})
const anthropicToolUse = z.looseObject({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: jsonObject, ...cacheControl })
const anthropicToolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string({ error: 'a tool_result needs tool_use_id' }).min(1),
  content: optional(z.union([z.string(), z.array(z.union([anthropicText, anthropicImage]))], { error: 'a tool_result content is a string or text and image blocks' })),
  is_error: optional(z.boolean()),
  ...cacheControl,
})
/** Blocks Plaza reads are checked; others (thinking, documents, server tools) are kept for an Anthropic provider. */
const anthropicBlock = byType({ text: anthropicText, image: anthropicImage, tool_use: anthropicToolUse, tool_result: anthropicToolResult }, 'each content block is an object with a type')
export type AnthropicBlock = z.output<typeof anthropicBlock>

const anthropicMessage = z.looseObject({
  role: z.enum(['user', 'assistant'], { error: 'a message role is user or assistant' }),
  content: z.union([z.string(), z.array(anthropicBlock).max(1000)], { error: 'a message content is a string or an array of blocks' }),
})

const anthropicTool = z.union([
  z.looseObject({ name: functionName, description: optional(z.string()), input_schema: jsonObject, type: optional(z.literal('custom')), ...cacheControl }),
  z.looseObject({ type: z.string(), name: z.string() }),
])

/** POST /v1/messages: Anthropic's Messages request. */
export const messagesInput = z.looseObject(
  {
    model: modelName,
    max_tokens: maxTokens('max_tokens'),
    messages: z
      .array(anthropicMessage, { error: 'messages must be an array of {role, content}' })
      .min(1, 'messages must hold at least one message')
      .max(1000, 'messages may hold at most 1000 messages'),
    system: optional(z.union([z.string(), z.array(anthropicText)], { error: 'system must be a string or an array of text blocks' })),
    tools: optional(z.array(anthropicTool, { error: 'tools must be an array of {name, description, input_schema}' }).max(128, 'tools may hold at most 128 tools')),
    tool_choice: optional(
      z.discriminatedUnion(
        'type',
        [
          z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: optional(z.boolean()) }),
          z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: optional(z.boolean()) }),
          z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: optional(z.boolean()) }),
          z.looseObject({ type: z.literal('none') }),
        ],
        { error: 'tool_choice is {type: "auto" | "any" | "tool" | "none"}' },
      ),
    ),
    temperature: optional(between('temperature', 0, 1)),
    top_p: optional(z.number({ error: 'top_p must be a number' }).gt(0).max(1, 'top_p must be greater than 0 and at most 1')),
    top_k: optional(z.number({ error: 'top_k must be a number' }).int().min(1, 'top_k must be at least 1')),
    stop_sequences: optional(z.array(z.string().min(1).max(200)).max(16, 'stop_sequences holds at most 16 sequences')),
    stream: optional(z.boolean({ error: 'stream must be true or false' })),
    metadata: optional(z.looseObject({ user_id: optional(z.string().max(256)) })),
    thinking: optional(z.looseObject({ type: z.string(), budget_tokens: optional(z.number().int()) })),
  },
  { error: 'Request body must be a JSON object' },
)
export type MessagesInput = z.output<typeof messagesInput>

// ---------------------------------------------------------------- embeddings, moderations, speech, transcriptions

const embeddingText = z.union(
  [
    z.string(),
    z.array(z.string()).min(1, 'input must not be an empty array').max(2048, 'input holds at most 2048 items'),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).min(1).max(2048),
  ],
  { error: 'input must be a string, an array of strings, or tokens (arrays of integers)' },
)

/** POST /v1/embeddings: OpenAI's request; `model` is required, as OpenAI requires it. */
export const embeddingsInput = z.looseObject(
  {
    model: modelName,
    input: embeddingText,
    encoding_format: optional(z.enum(['float', 'base64'], { error: 'encoding_format is float or base64' })),
    dimensions: optional(z.number().int().min(1).max(65536)),
    user: optional(z.string().max(256)),
  },
  { error: 'Request body must be a JSON object' },
)

/** The moderation model when a request names none (OpenAI's default). */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest'

/** POST /v1/moderations. */
export const moderationsInput = z.looseObject(
  {
    model: z.preprocess((v) => (v === null ? undefined : v), modelName.default(DEFAULT_MODERATION_MODEL)),
    input: z.union([z.string(), z.array(z.union([z.string(), z.looseObject({ type: z.string() })])).min(1).max(1000)], { error: 'input must be a string or an array of strings or parts' }),
  },
  { error: 'Request body must be a JSON object' },
)

/** POST /v1/audio/speech: OpenAI's request; the answer is the audio. */
export const audioSpeechInput = z.looseObject(
  {
    model: modelName,
    input: z.string({ error: 'input is required' }).min(1, 'input must not be empty').max(4096, 'input is at most 4096 characters'),
    voice: z.union([z.string().min(1).max(64), z.looseObject({ id: z.string() })], { error: 'voice is required' }),
    response_format: optional(z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'], { error: 'response_format is mp3, opus, aac, flac, wav or pcm' })),
    speed: optional(between('speed', 0.25, 4)),
    instructions: optional(z.string().max(4096)),
    stream_format: optional(z.enum(['audio', 'sse'])),
  },
  { error: 'Request body must be a JSON object' },
)

/** POST /v1/audio/transcriptions: the form's fields besides `file` (OpenAI's clients send them in the form; the query may carry them too, as the OpenAPI document shows them). */
export const audioTranscriptionFields = z.looseObject({
  model: modelName,
  language: optional(z.string().max(16)),
  prompt: optional(z.string().max(8192)),
  response_format: optional(z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt'])),
  temperature: optional(between('temperature', 0, 1)),
  stream: optional(z.enum(['true', 'false'])),
})
