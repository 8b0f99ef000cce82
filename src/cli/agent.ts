/**
 * Where `plaza util agent` runs: in-process (the chat gateway from this environment's PLAZA_LLM_*
 * variables and the sandboxes from PLAZA_EXECUTE_*; no database is opened, and no key is needed:
 * whoever runs the CLI on the machine is its operator), or a server's `POST /api/agent` over
 * Server-Sent Events with the premium key in `PLAZA_GATEWAY_KEY`.
 */
import { createParser } from 'eventsource-parser'
import { AGENT_EVENT_TYPES, type AgentEvent, type AgentInput } from '../shared/schemas/agent.js'
import { reach, UsageError, type Target } from './client.js'

export type OnAgentEvent = (event: AgentEvent) => Promise<void> | void

export async function runAgentCommand(target: Target, input: AgentInput, onEvent: OnAgentEvent, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return target.kind === 'remote' ? runRemote(target.url, input, onEvent, env.PLAZA_GATEWAY_KEY?.trim() || undefined) : runEmbedded(input, onEvent, env)
}

async function runEmbedded(input: AgentInput, onEvent: OnAgentEvent, env: NodeJS.ProcessEnv): Promise<void> {
  const [{ agentInput }, { loadChatConfig }, { createChatGateway }, { createExecuteService }, { runAgent }, { parseAgentTimeout }] = await Promise.all([
    import('../shared/schemas/agent.js'),
    import('../server/chat/config.js'),
    import('../server/chat/gateway.js'),
    import('../server/catalog/tools/execute/service.js'),
    import('../server/catalog/llm/agent.js'),
    import('../server/config.js'),
  ])
  const parsed = agentInput.safeParse(input)
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '))
  const timeoutMs = parseAgentTimeout(env.PLAZA_AGENT_TIMEOUT_MS)
  const gateway = createChatGateway(loadChatConfig(env))
  const execute = createExecuteService(env)
  // Ctrl+C stops the model call under way rather than leaving it to run.
  const controller = new AbortController()
  const interrupt = () => controller.abort()
  process.once('SIGINT', interrupt)
  try {
    gateway.assertServes(parsed.data.model)
    await runAgent(parsed.data, { gateway, execute, signal: controller.signal, timeoutMs, piston: Boolean(env.PLAZA_PISTON_BASE_URL?.trim()), emit: onEvent })
    if (controller.signal.aborted) throw new Error('interrupted')
  } finally {
    process.off('SIGINT', interrupt)
    await Promise.all([gateway.close(), execute.close()])
  }
}

/** The message of a refusal: the envelope's `message`. */
function errorMessage(status: number, text: string): string {
  try {
    const message = JSON.parse(text)?.message
    if (typeof message === 'string') return message
  } catch {
    // not JSON
  }
  return `the server answered HTTP ${status}`
}

async function runRemote(base: string, input: AgentInput, onEvent: OnAgentEvent, key: string | undefined): Promise<void> {
  const response = await reach(base, `${base}/api/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(input),
  })
  if (!response.ok) {
    const message = errorMessage(response.status, await response.text())
    if (response.status === 403 && !key) throw new Error(`${message} (set PLAZA_GATEWAY_KEY)`)
    throw new Error(message)
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) throw new Error(`unexpected answer from ${base}: is it a Plaza server?`)
  const queue: AgentEvent[] = []
  const parser = createParser({
    onEvent: (message) => {
      if (!(AGENT_EVENT_TYPES as readonly string[]).includes(message.event ?? '')) return
      queue.push({ type: message.event, ...JSON.parse(message.data) } as AgentEvent)
    },
  })
  const decoder = new TextDecoder()
  let done = false
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }))
    while (queue.length > 0) {
      const event = queue.shift()!
      if (event.type === 'done') done = true
      await onEvent(event)
    }
  }
  if (!done) throw new Error('the server ended the run before finishing')
}
