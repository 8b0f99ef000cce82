/**
 * A real HTTP server on loopback that speaks OpenAI's chat completions and Anthropic's Messages
 * protocols, as a model provider would. Each request takes the next scripted behaviour, or the
 * default answer when the script is empty; every request is recorded for assertions.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface RecordedRequest {
  path: string
  headers: http.IncomingHttpHeaders
  body: any
  /** Resolves when the connection of this request closed before the answer ended (client abort). */
  aborted: Promise<void>
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>

export interface FakeUpstream {
  url: string
  requests: RecordedRequest[]
  /** Queues behaviours for the next requests, in order. */
  enqueue(...behaviours: Behaviour[]): void
  close(): Promise<void>
}

const isAnthropic = (req: IncomingMessage) => (req.url ?? '').endsWith('/v1/messages')

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
      sse(res, { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: usage.input, output_tokens: 1 } } }, 'message_start')
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

export async function startFakeUpstream(defaultBehaviour: Behaviour = reply()): Promise<FakeUpstream> {
  const queue: Behaviour[] = []
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    let body: any = {}
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
    } catch {
      body = { unparsable: true }
    }
    const aborted = new Promise<void>((resolve) => res.on('close', () => !res.writableFinished && resolve()))
    requests.push({ path: req.url ?? '', headers: req.headers, body, aborted })
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
      sse(res, { type: 'message_start', message: { id: 'msg_2', usage: { input_tokens: 30, output_tokens: 1 } } }, 'message_start')
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
