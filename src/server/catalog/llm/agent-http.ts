/**
 * `POST /api/agent` `{prompt | messages, model?, language?, maxSteps?}`: the coding agent
 * (agent.ts), streamed as Server-Sent Events, one named event per thing it does. Reserved to
 * callers with a premium gateway key: no key or another key is a 403, a key that is not one of this
 * gateway's a 401 (as every gateway operation answers). Each model call is counted on the key as a
 * chat call is. Refusals before the stream (400, 401, 403, 404 model, 429, 503) use the envelope.
 */
import type { ServerResponse } from 'node:http'
import { agentInput, type AgentEvent } from '../../../shared/schemas/agent.js'
import { GatewayError } from '../../chat/errors.js'
import { sendChatError } from '../../chat/http.js'
import { readJson, writeStreamed } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import { runAgent } from './agent.js'

/** Room for a long conversation in `messages`, as the chat operations allow. */
const AGENT_BODY_LIMIT = 4 * 1024 * 1024

const NEEDS_PREMIUM =
  'POST /api/agent is reserved to premium gateway keys: send Authorization: Bearer <key> with a key the operator created with plaza admin keys create --premium.'

/** Writes one named SSE event, waiting while the client reads slower than the agent writes. */
export async function writeAgentEvent(res: ServerResponse, event: AgentEvent): Promise<void> {
  if (res.destroyed) return
  const { type, ...data } = event
  await writeStreamed(res, `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
}

export async function handleAgent(exchange: Exchange): Promise<void> {
  const { req, res, ctx } = exchange
  const { services } = ctx
  // The client going away aborts the model call under way (and stops paying for tokens nobody reads).
  const controller = new AbortController()
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  try {
    const timeoutMs = services.config.agentTimeoutMs
    // No key at all is refused here, before the gateway's own check (which would say 401, or let it in while the gateway is open).
    if (!ctx.token) throw new GatewayError(403, 'premium_required', NEEDS_PREMIUM)
    // A key that is not one of this gateway's (or revoked) is a 401, as on every gateway operation.
    const pass = await (await services.gatewayAccess()).authorize(ctx.token)
    if (!pass.key?.premium) throw new GatewayError(403, 'premium_required', NEEDS_PREMIUM)
    const input = agentInput.parse(await readJson(req, AGENT_BODY_LIMIT))
    if (!pass.allows(input.model)) throw new GatewayError(403, 'model_not_allowed', `This key may not use the model "${input.model}".`, 'model')
    const gateway = await services.chat()
    gateway.assertServes(input.model)
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' })
    res.flushHeaders()
    // A model call or a program may take a while: a comment now and then keeps proxies from closing an idle stream.
    const heartbeat = setInterval(() => {
      if (!res.destroyed && res.writableLength === 0) res.write(': keep-alive\n\n')
    }, services.config.streams.heartbeatMs)
    await runAgent(input, {
      gateway,
      execute: services.execute,
      admit: async (model) => void (await pass.admit(model)),
      settle: (model, outcome) => pass.settle(model, outcome),
      signal: controller.signal,
      timeoutMs,
      piston: Boolean(services.config.env.PLAZA_PISTON_BASE_URL?.trim()),
      emit: (event) => writeAgentEvent(res, event),
      logger: services.logger,
    }).finally(() => clearInterval(heartbeat))
    res.end()
  } catch (error) {
    sendChatError(exchange, 'envelope', error)
  }
}
