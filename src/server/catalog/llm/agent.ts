/**
 * The coding agent's loop (`POST /api/agent`, `plaza util agent`): the model is called through the
 * chat gateway with one tool, `execute`, which is `POST /api/execute`'s sandbox; each program it
 * asks for is run and its output handed back, until it answers without calling the tool, the step
 * cap or the wall time is reached, or the caller goes away (which aborts the upstream call).
 * Everything it does is told through `emit`, in order; it never throws for a failure of the
 * model, the sandbox or the caller's limits (those are `error` events).
 */
import type { AgentErrorCode, AgentEvent, AgentRequest, AgentToolCall, AgentUsage } from '../../../shared/schemas/agent.js'
import type { ChatMessage, ChatTool, ToolCall } from '../../../shared/schemas/chat.js'
import { executeInput, localLanguageOf, type ExecuteRequest, type ExecuteResult } from '../../../shared/schemas/execute.js'
import type { ChatGateway, ChatResult } from '../../chat/gateway.js'
import { GatewayError } from '../../chat/errors.js'
import type { CallOutcome } from '../../chat/keys/usage.js'
import { toPublicError } from '../../errors.js'
import type { Logger } from '../../logger.js'
import { BusyError } from '../tools/execute/gate.js'

export const TOOL_NAME = 'execute'
/** Programs run per step; more calls in one message are answered with an error. */
export const MAX_CALLS_PER_STEP = 8
/** What the model is shown of each of stdout and stderr (the events carry them whole). */
export const MODEL_OUTPUT_CHARS = 16_000

export interface AgentDeps {
  gateway: ChatGateway
  execute: { run(request: ExecuteRequest): Promise<ExecuteResult> }
  /** Called before each model call; throws (a GatewayError) to refuse it: a key's allow-list, budget and per-minute limits. */
  admit?(model: string): void | Promise<void>
  /** Called after each admitted model call with its usage, as a chat call is counted. */
  settle?(model: string, outcome: CallOutcome): void
  /** Aborted when the caller goes away: the upstream call is aborted and nothing more is emitted. */
  signal: AbortSignal
  /** The run's wall time; past it the current model call is aborted and the run ends with a `timeout` error. */
  timeoutMs: number
  /** Whether a Piston provider runs other languages than JavaScript and Python. */
  piston: boolean
  emit(event: AgentEvent): Promise<void> | void
  logger?: Logger
}

const GATEWAY_CODES = new Set<string>(['upstream_error', 'upstream_timeout', 'provider_not_configured', 'model_not_found', 'model_not_allowed', 'rate_limit_exceeded', 'insufficient_quota', 'invalid_request'])

/** The language's canonical name (`js` is `javascript`). */
const canonical = (language: string) => localLanguageOf(language) ?? language

function systemPrompt(languages: string[] | null): string {
  const which = languages ? `Write programs in ${languages.join(' or ')}.` : 'Write programs in JavaScript or Python (other languages run through a Piston provider).'
  return [
    'You are a coding agent. You can run programs with the `execute` tool: it runs the code in a sandbox and returns its stdout, stderr and exit code.',
    'Run code to compute, check and test rather than guessing; read the output and fix the program when it fails.',
    which,
    'JavaScript runs in QuickJS: console.log prints, `stdin` holds standard input; there is no require, import, fetch, timers, files or network.',
    'Python is CPython with its standard library, without network. Every run starts afresh: nothing is kept between runs.',
    'When you have the answer, reply with it without calling the tool.',
  ].join('\n')
}

function toolDefinition(languages: string[] | null): ChatTool {
  return {
    type: 'function',
    function: {
      name: TOOL_NAME,
      description: 'Run a program in a sandbox and get what it wrote to stdout and stderr, its exit code and whether it timed out.',
      parameters: {
        type: 'object',
        properties: {
          language: languages ? { type: 'string', enum: languages } : { type: 'string', description: 'javascript, python, or a Piston language (go, rust, c, ...)' },
          code: { type: 'string', description: 'the whole program' },
          stdin: { type: 'string', description: 'standard input (optional)' },
        },
        required: ['language', 'code'],
        additionalProperties: false,
      },
    },
  }
}

function cap(text: string): string {
  return text.length <= MODEL_OUTPUT_CHARS ? text : `${text.slice(0, MODEL_OUTPUT_CHARS)}\n[${text.length - MODEL_OUTPUT_CHARS} more characters not shown]`
}

/** A tool call's arguments as a program to run, or why they are not one. */
function programOf(call: ToolCall, only: string | null): { request: ExecuteRequest } | { error: string } {
  if (call.function.name !== TOOL_NAME) return { error: `there is no tool "${call.function.name}": the only tool is ${TOOL_NAME}` }
  let args: unknown
  try {
    args = JSON.parse(call.function.arguments || '{}')
  } catch {
    return { error: 'the arguments are not valid JSON: give {"language": ..., "code": ..., "stdin"?: ...}' }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return { error: 'the arguments must be a JSON object: {"language": ..., "code": ..., "stdin"?: ...}' }
  const parsed = executeInput.safeParse(args)
  if (!parsed.success) return { error: `invalid arguments: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` }
  if (only && canonical(parsed.data.language) !== only) return { error: `this run executes ${only} only` }
  return { request: parsed.data }
}

/**
 * The assistant message as it goes back to the model: ids filled in where the upstream gave none,
 * and arguments that are not a JSON object replaced by `{}` (Anthropic's protocol cannot carry
 * them; the tool result says what was wrong).
 */
function callsOf(result: ChatResult, step: number): AgentToolCall[] {
  return (result.choices[0].toolCalls ?? []).map((call, position) => {
    let args = call.function.arguments
    try {
      const parsed = JSON.parse(args || '{}')
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) args = '{}'
    } catch {
      args = '{}'
    }
    return { id: call.id || `call_${step}_${position + 1}`, type: 'function', function: { name: call.function.name, arguments: args } }
  })
}

export async function runAgent(request: AgentRequest, deps: AgentDeps): Promise<void> {
  const only = request.language ? canonical(request.language) : null
  const languages = only ? [only] : deps.piston ? null : ['javascript', 'python']
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt(languages) }, ...(request.messages ?? [{ role: 'user' as const, content: (request.prompt ?? request.task)! }])]
  const params = { tools: [toolDefinition(languages)], tool_choice: 'auto' as const }
  const usage: AgentUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), deps.timeoutMs)
  const signal = AbortSignal.any([deps.signal, deadline.signal])
  let step = 0

  const fail = async (code: AgentErrorCode, message: string) => {
    await deps.emit({ type: 'error', step, code, message })
    await deps.emit({ type: 'done', steps: step, finish: 'error', usage })
  }
  const timedOut = () => fail('timeout', `the run took longer than its ${Math.round(deps.timeoutMs / 1000)} s and was stopped`)

  /** One model call, counted on the caller's key; null when the run is over (the failure already told). */
  const callModel = async (): Promise<ChatResult | null> => {
    try {
      await deps.admit?.(request.model)
    } catch (error) {
      await failWith(error)
      return null
    }
    try {
      const result = await deps.gateway.complete({ model: request.model, messages, params }, signal)
      deps.settle?.(request.model, { usage: result.usage, cost: result.cost, failed: false })
      return result
    } catch (error) {
      // A caller that went away is a request, not an error.
      deps.settle?.(request.model, { failed: !deps.signal.aborted })
      if (deps.signal.aborted) return null
      if (deadline.signal.aborted) await timedOut()
      else await failWith(error)
      return null
    }
  }

  const failWith = async (error: unknown) => {
    if (error instanceof GatewayError) return fail(GATEWAY_CODES.has(error.code) ? (error.code as AgentErrorCode) : 'upstream_error', error.message)
    deps.logger?.error('agent model call failed', { error: String((error as Error)?.stack ?? error) })
    return fail('server_error', 'the model call failed unexpectedly')
  }

  /** Runs one program; what the model is told of it. */
  const runTool = async (call: AgentToolCall, raw: ToolCall, position: number): Promise<string> => {
    const program = position < MAX_CALLS_PER_STEP ? programOf(raw, only) : { error: `at most ${MAX_CALLS_PER_STEP} programs run per step: call the tool again in the next step` }
    const request = 'request' in program ? program.request : null
    await deps.emit({
      type: 'tool_call',
      step,
      id: call.id,
      name: raw.function.name,
      arguments: raw.function.arguments,
      language: request ? canonical(request.language) : null,
      code: request?.code ?? null,
      ...(request?.stdin !== undefined ? { stdin: request.stdin } : {}),
    })
    if (!request) {
      const error = (program as { error: string }).error
      await deps.emit({ type: 'tool_result', step, id: call.id, error })
      return JSON.stringify({ error })
    }
    let result: ExecuteResult
    try {
      result = await deps.execute.run(request)
    } catch (thrown) {
      // Busy, a language without its provider, the provider's failure: the model may try again or another way.
      const failure = thrown instanceof BusyError ? null : toPublicError(thrown)
      if (failure?.unexpected) deps.logger?.error('agent program failed to run', { error: String((thrown as Error)?.stack ?? thrown) })
      const error = !failure ? (thrown as BusyError).message : failure.unexpected ? 'the program could not be run (internal error)' : failure.message
      await deps.emit({ type: 'tool_result', step, id: call.id, error })
      return JSON.stringify({ error })
    }
    await deps.emit({ type: 'tool_result', step, id: call.id, ...result })
    return JSON.stringify({ stdout: cap(result.stdout), stderr: cap(result.stderr), exit_code: result.exit_code, timed_out: result.timed_out })
  }

  try {
    for (;;) {
      if (step >= request.maxSteps) {
        return await fail('max_steps_reached', `no answer after ${request.maxSteps} step${request.maxSteps === 1 ? '' : 's'} (maxSteps): the model was still running programs`)
      }
      step++
      const result = await callModel()
      if (!result) return
      if (result.usage) {
        usage.prompt_tokens += result.usage.prompt_tokens
        usage.completion_tokens += result.usage.completion_tokens
        usage.total_tokens += result.usage.total_tokens ?? result.usage.prompt_tokens + result.usage.completion_tokens
      }
      const choice = result.choices[0]
      const raw = choice.toolCalls ?? []
      const calls = callsOf(result, step)
      // The caller sees the calls as the model made them (ids filled in); the model gets `calls` back.
      const made = raw.map((call, position) => ({ ...call, id: calls[position].id }))
      await deps.emit({
        type: 'step',
        step,
        message: { role: 'assistant', content: choice.content, reasoning: choice.reasoning, ...(made.length > 0 ? { tool_calls: made } : {}) },
        finish_reason: choice.finishReason,
        usage: result.usage ?? null,
      })
      if (deps.signal.aborted) return
      if (calls.length === 0) {
        await deps.emit({ type: 'answer', step, content: result.answer, reasoning: result.reasoning })
        await deps.emit({ type: 'done', steps: step, finish: 'answer', usage })
        return
      }
      messages.push({ role: 'assistant', content: choice.content ?? '', tool_calls: calls })
      for (const [position, call] of calls.entries()) {
        const content = await runTool(call, raw[position], position)
        messages.push({ role: 'tool', tool_call_id: call.id, content })
        if (deps.signal.aborted) return
        if (deadline.signal.aborted) return await timedOut()
      }
    }
  } finally {
    clearTimeout(timer)
  }
}
