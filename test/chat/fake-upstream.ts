/**
 * A real HTTP server on loopback that speaks a model provider's protocols: OpenAI's chat
 * completions, Responses, embeddings, moderations, speech and transcriptions, and Anthropic's
 * Messages, as a provider would. Each request takes the next scripted behaviour, or the default
 * answer when the script is empty; every request is recorded for assertions. `GET /v1/models`
 * (OpenAI's shape, or Anthropic's when the request carries `anthropic-version`) answers the
 * `models` option without taking a scripted behaviour, and is counted apart (`modelLists`).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: any
  /** The body's bytes (a multipart form is not JSON). */
  raw: Buffer
  /** Resolves when the connection of this request closed before the answer ended (client abort). */
  aborted: Promise<void>
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>

export interface FakeUpstream {
  url: string
  requests: RecordedRequest[]
  /** How many times its model list was read. */
  modelLists: number
  /** What `GET /v1/models` lists (changeable between reads); null answers 404 as a server without the endpoint. */
  models: string[] | null
  /** Queues behaviours for the next requests, in order. */
  enqueue(...behaviours: Behaviour[]): void
  close(): Promise<void>
}

const isAnthropic = (req: IncomingMessage) => (req.url ?? '').endsWith('/v1/messages')
const isResponses = (req: IncomingMessage) => (req.url ?? '').endsWith('/responses')
const endpoint = (req: IncomingMessage) => (req.url ?? '').split('?')[0]

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Behaviour {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
}

/** Never answers (until the connection is closed by the caller or the server shuts down). */
export const hang: Behaviour = () => {}

export interface ReplyOptions {
  /** Pieces of the answer text, streamed one event each. */
  pieces?: string[]
  /** Reasoning given separately (OpenAI-compatible `reasoning_content`, Anthropic thinking). */
  reasoning?: string
  /** After this many content events: `destroy` resets the connection, `end` ends cleanly without finishing, `hang` goes silent. */
  cutAfter?: { events: number; how: 'destroy' | 'end' | 'hang' }
  usage?: { input: number; output: number }
  /** Before this many content events have been sent, flush and wait for `until` (to watch a half-streamed answer). */
  pauseAfter?: { events: number; until: Promise<unknown> }
}

function sse(res: ServerResponse, data: unknown, event?: string) {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
}

/** Answers in whichever protocol the request used, streamed or not, as the request asked. */
export function reply(options: ReplyOptions = {}): Behaviour {
  const pieces = options.pieces ?? ['<think>The user greets me.</think>', 'Hello', ' there!']
  const usage = options.usage ?? { input: 12, output: 7 }
  return async (req, res, body) => {
    if (req.method === 'DELETE') return json(200, { id: endpoint(req).split('/').at(-1), object: 'response', deleted: true })(req, res, body)
    const other = OTHER_ENDPOINTS[endpoint(req).replace(/^.*\/v1\//, '')]
    if (other) return other(req, res, body)
    if (isResponses(req)) return responsesReply(options)(req, res, body)
    const text = pieces.join('')
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' })
      if (isAnthropic(req)) {
        const content = [...(options.reasoning ? [{ type: 'thinking', thinking: options.reasoning, signature: 'sig' }] : []), { type: 'text', text }]
        res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content, stop_reason: 'end_turn', usage: { input_tokens: usage.input, output_tokens: usage.output } }))
      } else {
        const message = { role: 'assistant', content: text, ...(options.reasoning ? { reasoning_content: options.reasoning } : {}) }
        res.end(JSON.stringify({ id: 'up-1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: 'stop' }], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } }))
      }
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.flushHeaders()
    const cut = async (index: number) => {
      if (options.pauseAfter && index === options.pauseAfter.events) {
        await new Promise((resolve) => res.write(': flush\n\n', resolve))
        await options.pauseAfter.until
      }
      if (!options.cutAfter || index !== options.cutAfter.events) return false
      // An SSE comment whose write callback says everything before it has left for the gateway.
      await new Promise((resolve) => res.write(': flush\n\n', resolve))
      if (options.cutAfter.how === 'destroy') res.socket?.destroy()
      else if (options.cutAfter.how === 'end') res.end()
      return true
    }
    if (isAnthropic(req)) {
      sse(res, { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1 } } }, 'message_start')
      sse(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start')
      if (options.reasoning) sse(res, { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: options.reasoning } }, 'content_block_delta')
      for (let i = 0; i < pieces.length; i++) {
        if (await cut(i)) return
        sse(res, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: pieces[i] } }, 'content_block_delta')
      }
      if (await cut(pieces.length)) return
      sse(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop')
      sse(res, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: usage.output } }, 'message_delta')
      sse(res, { type: 'message_stop' }, 'message_stop')
      res.end()
      return
    }
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'up-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })
    sse(res, chunk({ role: 'assistant', content: '' }))
    if (options.reasoning) sse(res, chunk({ reasoning_content: options.reasoning }))
    for (let i = 0; i < pieces.length; i++) {
      if (await cut(i)) return
      sse(res, chunk({ content: pieces[i] }))
    }
    if (await cut(pieces.length)) return
    sse(res, chunk({}, 'stop'))
    sse(res, { id: 'up-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } })
    sse(res, '[DONE]')
    res.end()
  }
}

export async function startFakeUpstream(defaultBehaviour: Behaviour = reply(), options: { models?: string[] | null } = {}): Promise<FakeUpstream> {
  const queue: Behaviour[] = []
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const fake = { modelLists: 0, models: options.models === undefined ? ['fake-large', 'fake-small'] : options.models }
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks)
    if (req.method === 'GET' && endpoint(req) === '/v1/models') {
      fake.modelLists++
      if (!fake.models) return json(404, { error: { message: 'Not found' } })(req, res, {})
      const anthropic = req.headers['anthropic-version'] !== undefined
      const data = fake.models.map((id) => (anthropic ? { type: 'model', id, display_name: id, created_at: '2025-02-19T00:00:00Z' } : { id, object: 'model', created: 1_700_000_000, owned_by: 'fake' }))
      return json(200, anthropic ? { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null } : { object: 'list', data })(req, res, {})
    }
    let body: any = {}
    try {
      body = JSON.parse(raw.toString('utf8') || '{}')
    } catch {
      body = { unparsable: true }
    }
    const aborted = new Promise<void>((resolve) => res.on('close', () => !res.writableFinished && resolve()))
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '', headers: req.headers, body, raw, aborted })
    requestForm.set(req, raw.toString('latin1'))
    await (queue.shift() ?? defaultBehaviour)(req, res, body)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get modelLists() {
      return fake.modelLists
    },
    get models() {
      return fake.models
    },
    set models(models) {
      fake.models = models
    },
    enqueue: (...behaviours) => void queue.push(...behaviours),
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export interface ToolCallReply {
  id?: string
  name: string
  /** The call's arguments, a JSON object as text. */
  arguments: string
  /** Streamed: the arguments cut into this many pieces, one event each (default 5). */
  pieces?: number
  /** Text the model says before calling the tool. */
  text?: string
}

function cutInto(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count))
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/** Answers with a call of one tool, in whichever protocol the request used, streamed (the arguments in pieces) or not. */
export function callTool(call: ToolCallReply): Behaviour {
  const id = call.id ?? 'call_1'
  const pieces = cutInto(call.arguments, call.pieces ?? 5)
  return (req, res, body) => {
    if (isResponses(req)) return responsesReply({ call: { id, name: call.name, arguments: call.arguments, pieces }, text: call.text })(req, res, body)
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-upstream-7' })
      if (isAnthropic(req)) {
        const content = [...(call.text ? [{ type: 'text', text: call.text }] : []), { type: 'tool_use', id, name: call.name, input: JSON.parse(call.arguments) }]
        res.end(JSON.stringify({ id: 'msg_2', type: 'message', role: 'assistant', model: body.model, content, stop_reason: 'tool_use', usage: { input_tokens: 30, output_tokens: 9 } }))
      } else {
        const message = { role: 'assistant', content: call.text ?? null, tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: call.arguments } }] }
        res.end(JSON.stringify({ id: 'up-2', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 } }))
      }
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-upstream-7' })
    if (isAnthropic(req)) {
      sse(res, { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, output_tokens: 1 } } }, 'message_start')
      let block = 0
      if (call.text) {
        sse(res, { type: 'content_block_start', index: block, content_block: { type: 'text', text: '' } }, 'content_block_start')
        sse(res, { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text: call.text } }, 'content_block_delta')
        sse(res, { type: 'content_block_stop', index: block++ }, 'content_block_stop')
      }
      sse(res, { type: 'content_block_start', index: block, content_block: { type: 'tool_use', id, name: call.name, input: {} } }, 'content_block_start')
      for (const piece of pieces) sse(res, { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: piece } }, 'content_block_delta')
      sse(res, { type: 'content_block_stop', index: block }, 'content_block_stop')
      sse(res, { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }, 'message_delta')
      sse(res, { type: 'message_stop' }, 'message_stop')
      res.end()
      return
    }
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'up-2', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })
    sse(res, chunk({ role: 'assistant', content: call.text ?? null }))
    sse(res, chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name: call.name, arguments: '' } }] }))
    for (const piece of pieces) sse(res, chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }))
    sse(res, chunk({}, 'tool_calls'))
    sse(res, { id: 'up-2', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 } })
    sse(res, '[DONE]')
    res.end()
  }
}

/**
 * OpenAI's Responses API as a provider that serves it answers: a message with the reply's text, or
 * a function call; streamed as its typed events, with sequence numbers, ending in response.completed.
 */
function responsesReply(options: ReplyOptions & { call?: { id: string; name: string; arguments: string; pieces: string[] }; text?: string }): Behaviour {
  const usage = options.usage ?? { input: 12, output: 7 }
  return (_req, res, body) => {
    const id = `resp_upstream_${Math.random().toString(16).slice(2, 10)}`
    const text = options.call ? (options.text ?? '') : (options.pieces ?? ['Hello', ' there!']).join('')
    const message = { type: 'message', id: 'msg_up_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }
    const callItem = options.call && { type: 'function_call', id: 'fc_up_1', call_id: options.call.id, name: options.call.name, arguments: options.call.arguments, status: 'completed' }
    const output = [...(text || !callItem ? [message] : []), ...(callItem ? [callItem] : [])]
    const response = (status: string, out: unknown[]) => ({
      id,
      object: 'response',
      created_at: 1_700_000_000,
      status,
      model: body.model,
      output: out,
      previous_response_id: body.previous_response_id ?? null,
      store: body.store ?? true,
      usage: status === 'completed' ? { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output } : null,
    })
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-responses-1' })
      res.end(JSON.stringify(response('completed', output)))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-responses-1' })
    let sequence = 0
    const emit = (type: string, data: Record<string, unknown>) => sse(res, { type, sequence_number: sequence++, ...data }, type)
    emit('response.created', { response: response('in_progress', []) })
    emit('response.in_progress', { response: response('in_progress', []) })
    let index = 0
    if (text || !callItem) {
      emit('response.output_item.added', { output_index: index, item: { ...message, status: 'in_progress', content: [] } })
      emit('response.content_part.added', { item_id: message.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })
      for (const piece of options.call ? [text] : (options.pieces ?? ['Hello', ' there!'])) emit('response.output_text.delta', { item_id: message.id, output_index: index, content_index: 0, delta: piece })
      emit('response.output_text.done', { item_id: message.id, output_index: index, content_index: 0, text })
      emit('response.content_part.done', { item_id: message.id, output_index: index, content_index: 0, part: message.content[0] })
      emit('response.output_item.done', { output_index: index, item: message })
      index++
    }
    if (callItem && options.call) {
      emit('response.output_item.added', { output_index: index, item: { ...callItem, arguments: '', status: 'in_progress' } })
      for (const piece of options.call.pieces) emit('response.function_call_arguments.delta', { item_id: callItem.id, output_index: index, delta: piece })
      emit('response.function_call_arguments.done', { item_id: callItem.id, output_index: index, arguments: callItem.arguments })
      emit('response.output_item.done', { output_index: index, item: callItem })
    }
    emit('response.completed', { response: response('completed', output) })
    res.end()
  }
}

/** OpenAI's embeddings: one small vector per input, the same for the same text; usage counts a token per word. */
const embeddingsReply: Behaviour = (_req, res, body) => {
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input]
  const tokens = inputs.reduce<number>((sum, input) => sum + String(input).split(/\s+/).length, 0)
  const vector = (input: unknown) => [...String(input)].slice(0, 4).map((char) => char.charCodeAt(0) / 1000).concat([0, 0, 0, 0]).slice(0, 4)
  // OpenAI's client asks for base64 (float32 little-endian) unless told otherwise.
  const encode = (values: number[]) => (body.encoding_format === 'base64' ? Buffer.from(new Float32Array(values).buffer).toString('base64') : values)
  const data = inputs.map((input, index) => ({ object: 'embedding', index, embedding: encode(vector(input)) }))
  json(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } })(_req, res, body)
}

const moderationsReply: Behaviour = (_req, res, body) => {
  const flagged = String(body.input).includes('hate')
  json(200, { id: 'modr-1', model: body.model, results: [{ flagged, categories: { hate: flagged }, category_scores: { hate: flagged ? 0.9 : 0.01 } }] })(_req, res, body)
}

/** The "audio" of a speech request: the input's bytes behind an ID3 header, in three chunks. */
const speechReply: Behaviour = async (_req, res, body) => {
  res.writeHead(200, { 'content-type': 'audio/mpeg' })
  for (const chunk of [Buffer.from('ID3'), Buffer.from(`voice=${body.voice};`), Buffer.from(String(body.input))]) {
    await new Promise((resolve) => res.write(chunk, resolve))
  }
  res.end()
}

/** A transcription: the uploaded file's size and the form's model, as JSON, text, or events (`stream=true`). */
const transcriptionReply: Behaviour = (req, res) => {
  const form = (requestForm.get(req) ?? '')
  const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(form)?.[1]
  const text = `heard ${form.length} bytes for ${field('model')}`
  const usage = { type: 'tokens', input_tokens: 20, output_tokens: 5, total_tokens: 25 }
  if (field('stream') === 'true') {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    sse(res, { type: 'transcript.text.delta', delta: 'heard ' }, 'transcript.text.delta')
    sse(res, { type: 'transcript.text.delta', delta: text.slice(6) }, 'transcript.text.delta')
    sse(res, { type: 'transcript.text.done', text, usage }, 'transcript.text.done')
    res.end()
    return
  }
  if (field('response_format') === 'text') {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(text)
    return
  }
  json(200, { text, usage })(req, res, {})
}

/** The raw body of each request, for the behaviours that read a form. */
const requestForm = new WeakMap<IncomingMessage, string>()

const OTHER_ENDPOINTS: Record<string, Behaviour> = {
  embeddings: embeddingsReply,
  moderations: moderationsReply,
  'audio/speech': speechReply,
  'audio/transcriptions': transcriptionReply,
}
