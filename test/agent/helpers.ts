/**
 * The agent's tests: a scripted model behind the loopback OpenAI-compatible fake (it calls the
 * `execute` tool, then answers with what the tool gave back), and a client for `POST /api/agent`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createParser } from 'eventsource-parser'
import type { AgentEvent } from '../../src/shared/schemas/agent.js'
import { callTool, reply, type Behaviour } from '../chat/fake-upstream.js'

/**
 * A model that runs `program` (a JavaScript program) with the tool, and once it has seen the tool's
 * result answers `The program printed: <its stdout, trimmed>`, reading only what came back.
 */
export function codingModel(program = 'console.log(6*7)'): Behaviour {
  return (req: IncomingMessage, res: ServerResponse, body: any) => {
    const last = body.messages?.at(-1)
    // OpenAI's protocol: a `tool` message; Anthropic's: a `tool_result` block in the last user turn.
    const toolResult = last?.role === 'tool' ? last.content : Array.isArray(last?.content) ? last.content.find((block: any) => block.type === 'tool_result')?.content : undefined
    if (toolResult !== undefined) {
      const result = JSON.parse(toolResult)
      const text = 'error' in result ? `The tool failed: ${result.error}` : `The program printed: ${String(result.stdout).trim()}`
      return reply({ pieces: [text], usage: { input: 50, output: 8 } })(req, res, body)
    }
    return callTool({ id: `call_${body.messages.length}`, name: 'execute', arguments: JSON.stringify({ language: 'javascript', code: program }), text: 'Let me run it.' })(req, res, body)
  }
}

export interface AgentAnswer {
  status: number
  /** The envelope of a refusal. */
  body: any
  events: AgentEvent[]
}

/** POSTs to /api/agent and reads the whole answer: the refusal's body, or every event of the stream. */
export async function askAgent(url: string, body: unknown, token?: string, init: RequestInit = {}): Promise<AgentAnswer> {
  const response = await fetch(`${url}/api/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
    ...init,
  })
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { status: response.status, body: await response.json(), events: [] }
  const events: AgentEvent[] = []
  const parser = createParser({ onEvent: (event) => events.push({ type: event.event, ...JSON.parse(event.data) } as AgentEvent) })
  const decoder = new TextDecoder()
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
  return { status: response.status, body: null, events }
}

export const typesOf = (events: AgentEvent[]) => events.map((event) => event.type)
