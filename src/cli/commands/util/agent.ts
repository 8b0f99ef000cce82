import { Args, Flags } from '@oclif/core'
import { AGENT_DEFAULT_STEPS, AGENT_MAX_STEPS, type AgentEvent, type AgentInput } from '../../../shared/schemas/agent.js'
import { DEFAULT_CHAT_ALIAS } from '../../../shared/schemas/chat.js'
import { PlazaCommand, UsageError } from '../../base.js'

export default class Agent extends PlazaCommand<typeof Agent> {
  static override description = `Ask the coding agent: a model that runs programs in Plaza's sandbox (POST /api/execute) until it can answer.

Prints each step as it happens: what the model said, the programs it ran and their output, then the answer. --json prints the events themselves, one JSON object a line.
Embedded (no --url), the gateway and the sandboxes run in-process with this environment's PLAZA_LLM_* and PLAZA_EXECUTE_* settings; with --url it uses that server's POST /api/agent, which needs a premium gateway key in PLAZA_GATEWAY_KEY.`

  static override examples = [
    '<%= config.bin %> util agent "What is the 30th Fibonacci number?"',
    '<%= config.bin %> util agent "Sum the primes below 10000" --language python --max-steps 4',
    'PLAZA_GATEWAY_KEY=sk-plaza-... <%= config.bin %> util agent "Is 2^61-1 prime?" --url http://127.0.0.1:8080 --json',
  ]

  static override args = {
    prompt: Args.string({ description: 'the task; read from stdin when piped', ignoreStdin: true }),
  }

  static override flags = {
    model: Flags.string({ char: 'm', description: `model name the gateway serves (default ${DEFAULT_CHAT_ALIAS})` }),
    'max-steps': Flags.integer({ description: `most model calls (default ${AGENT_DEFAULT_STEPS}, at most ${AGENT_MAX_STEPS})`, min: 1, max: AGENT_MAX_STEPS }),
    language: Flags.string({ char: 'l', description: 'the one language the agent may run (default: JavaScript and Python)' }),
  }

  async run(): Promise<void> {
    const prompt = this.args.prompt ?? (process.stdin.isTTY ? undefined : await readStdin())
    if (prompt === undefined || prompt.trim() === '') throw new UsageError('give a PROMPT, or pipe one on stdin')
    const input: AgentInput = { prompt, ...(this.flags.model ? { model: this.flags.model } : {}), ...(this.flags.language ? { language: this.flags.language } : {}), ...(this.flags['max-steps'] ? { maxSteps: this.flags['max-steps'] } : {}) }
    const { runAgentCommand } = await import('../../agent.js')
    let failure: string | null = null
    await runAgentCommand(this.target, input, async (event) => {
      if (event.type === 'error') failure = event.message
      if (this.jsonEnabled()) process.stdout.write(JSON.stringify(event) + '\n')
      else printEvent(event)
    })
    if (failure) throw new Error(failure)
  }

  /** Events are printed as they arrive; there is no object to print at the end. */
  protected override toSuccessJson(): undefined {
    return undefined
  }
}

const indent = (text: string) =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n')

/** One event as plain lines on stdout (errors are left to the command's one-line failure on stderr). */
function printEvent(event: AgentEvent) {
  const out = (text: string) => process.stdout.write(text + '\n')
  switch (event.type) {
    case 'step':
      if (event.message.tool_calls && event.message.content?.trim()) out(`[step ${event.step}] ${event.message.content.trim()}`)
      break
    case 'tool_call':
      out(`[step ${event.step}] run ${event.language ?? event.name}${event.code === null ? ` (invalid call: ${event.arguments.slice(0, 200)})` : ''}`)
      if (event.code !== null) out(indent(event.code))
      break
    case 'tool_result':
      if ('error' in event) out(`[step ${event.step}] failed: ${event.error}`)
      else {
        out(`[step ${event.step}] ${event.timed_out ? 'timed out' : `exit ${event.exit_code}`} after ${event.duration_ms} ms`)
        if (event.stdout) out(indent(event.stdout))
        if (event.stderr) out(indent(event.stderr))
      }
      break
    case 'answer':
      out(`[answer]`)
      out(event.content)
      break
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
