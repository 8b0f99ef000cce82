/**
 * Where `plaza util chat` sends its conversation: the gateway in-process (embedded, configured by
 * this environment's PLAZA_LLM_* variables; no database is opened), or a Plaza server's chat
 * endpoints over HTTP with Server-Sent Events (remote).
 */
import { createParser } from 'eventsource-parser'
import type { ChatMessage, Sampling } from '../../shared/schemas/chat.js'
import type { CompletionBody } from '../../server/chat/format.js'
import { remoteFetch, unreachable, type Target } from '../client.js'

export type { CompletionBody }

export interface StreamDelta {
  content?: string
  reasoning?: string
}

export interface ChatBackend {
  complete(model: string, messages: ChatMessage[], sampling: Sampling): Promise<CompletionBody>
  /** The answer as it arrives; throws if it breaks off. `signal` stops it: the request to the provider (or the server) is aborted. */
  stream(model: string, messages: ChatMessage[], sampling: Sampling, signal?: AbortSignal): AsyncIterable<StreamDelta>
  /** The model names the gateway serves: its own names, then each provider's list (`GET /api/v1/models`). */
  models(): Promise<Array<{ id: string; owned_by: string }>>
  close(): Promise<void>
}

/** `env` holds the PLAZA_LLM_* settings of the embedded gateway (this process's environment unless given). */
export async function openChatBackend(target: Target, env: NodeJS.ProcessEnv = process.env): Promise<ChatBackend> {
  return target.kind === 'remote' ? remoteBackend(target.url, env.PLAZA_GATEWAY_KEY?.trim() || undefined) : embeddedBackend(env)
}

async function embeddedBackend(env: NodeJS.ProcessEnv): Promise<ChatBackend> {
  const [{ loadChatConfig }, { createChatGateway }, { completionBody }] = await Promise.all([
    import('../../server/chat/config.js'),
    import('../../server/chat/gateway.js'),
    import('../../server/chat/format.js'),
  ])
  const gateway = createChatGateway(loadChatConfig(env))
  const request = (model: string, messages: ChatMessage[], sampling: Sampling) => ({ model, messages, params: sampling })
  return {
    async complete(model, messages, sampling) {
      return completionBody(await gateway.complete(request(model, messages, sampling)))
    },
    async *stream(model, messages, sampling, signal) {
      const stream = await gateway.stream(request(model, messages, sampling), signal)
      for await (const event of stream.events) {
        if (signal?.aborted) return
        if (event.type === 'delta') yield { content: event.content, reasoning: event.reasoning }
      }
    },
    async models() {
      return (await gateway.listModels()).map((model) => ({ id: model.id, owned_by: model.provider }))
    },
    close: () => gateway.close(),
  }
}

/** The operation that serves a model name: the two fixed operations have their own paths. */
function pathFor(model: string): string {
  return model === 'chaty' ? '/api/chaty' : model === 'reasoning-70b' ? '/api/reasoning-70b' : '/api/v1/chat/completions'
}

/** The message of an error answer: OpenAI's `{error: {message}}` on /api/v1, the envelope elsewhere. */
function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text)
    const message = body?.error?.message ?? body?.message
    if (typeof message === 'string') return message
  } catch {
    // not JSON
  }
  return `the server answered HTTP ${status}`
}

/** `key`: the server's gateway key (`PLAZA_GATEWAY_KEY`), for a server whose gateway requires one. */
function remoteBackend(base: string, key: string | undefined): ChatBackend {
  const send = async (model: string, messages: ChatMessage[], sampling: Sampling, stream: boolean, signal?: AbortSignal) => {
    const path = pathFor(model)
    let response: Response
    try {
      response = (await remoteFetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ ...(path.startsWith('/api/v1') ? { model } : {}), messages, ...sampling, stream }),
        signal,
      })) as unknown as Response
    } catch (error) {
      if (signal?.aborted) throw error
      throw unreachable(base, error)
    }
    if (!response.ok) throw new Error(errorMessage(response.status, await response.text()))
    return response
  }
  return {
    async complete(model, messages, sampling) {
      return (await (await send(model, messages, sampling, false)).json()) as CompletionBody
    },
    async *stream(model, messages, sampling, signal) {
      const response = await send(model, messages, sampling, true, signal)
      const queue: string[] = []
      const parser = createParser({ onEvent: (event) => queue.push(event.data) })
      const decoder = new TextDecoder()
      let done = false
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (signal?.aborted) return
        parser.feed(decoder.decode(chunk, { stream: true }))
        while (queue.length > 0) {
          const data = queue.shift()!
          if (data === '[DONE]') {
            done = true
            continue
          }
          const event = JSON.parse(data)
          if (event.error) throw new Error(event.error.message ?? 'the answer broke off')
          const delta = event.choices?.[0]?.delta ?? {}
          if (delta.content || delta.reasoning_content) yield { content: delta.content || undefined, reasoning: delta.reasoning_content || undefined }
        }
      }
      if (!done) throw new Error('the server ended the answer before finishing')
    },
    async models() {
      let response: Response
      try {
        response = (await remoteFetch(`${base}/api/v1/models`, { headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) } })) as unknown as Response
      } catch (error) {
        throw unreachable(base, error)
      }
      if (!response.ok) throw new Error(errorMessage(response.status, await response.text()))
      const body = (await response.json()) as { data?: Array<{ id: string; owned_by: string }> }
      return Array.isArray(body.data) ? body.data.map(({ id, owned_by }) => ({ id, owned_by })) : []
    },
    close: async () => {},
  }
}
