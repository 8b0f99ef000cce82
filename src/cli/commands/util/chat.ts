import { Args, Flags } from '@oclif/core'
import { DEFAULT_CHAT_ALIAS, type ChatMessage, type Sampling } from '../../../shared/schemas/chat.js'
import { PlazaCommand, UsageError } from '../../base.js'
import type { ChatBackend, CompletionBody } from '../../ui/chat-backend.js'

export default class Chat extends PlazaCommand<typeof Chat> {
  static override description = `Chat with a model through Plaza's chat gateway.

Streams the answer to stdout as it arrives; reasoning (a <think> block or the provider's own) goes to stderr, dimmed, when stderr is a terminal. On a terminal the answer's Markdown is rendered (headings, emphasis, lists, tables, code blocks highlighted as in code images), block by block; piped, it is the model's text as is. The prompt is PROMPT, or piped stdin; with neither, on a terminal, opens an interactive chat that keeps the conversation.
Embedded (no --url), the gateway runs in-process with the PLAZA_LLM_* settings of this environment; with --url it uses that server's /api/v1/chat/completions (or /api/chaty, /api/reasoning-70b), sending PLAZA_GATEWAY_KEY as its key when the server's gateway requires one.`

  static override examples = [
    '<%= config.bin %> util chat "Explain SSE in one sentence"',
    'git diff | <%= config.bin %> util chat --system "Review this diff" --model modelc-3-5-sonnet-20241022',
    '<%= config.bin %> util chat -m gpt-4o-mini "Any model name the gateway serves: plaza util models lists them"',
    '<%= config.bin %> util chat --model reasoning-70b --no-stream --json "Is 1001 prime?"',
    '<%= config.bin %> util chat --url http://127.0.0.1:8080',
  ]

  static override args = {
    // oclif's own stdin reading gives up after 10 ms and trims; a slow pipe (git diff | ...) needs a full read.
    prompt: Args.string({ description: 'what to ask; read from stdin when piped; omitted on a terminal: interactive chat', ignoreStdin: true }),
  }

  static override flags = {
    model: Flags.string({ char: 'm', description: 'any model name the gateway serves (plaza util models lists them): a real name, a spec alias, provider/model, or chaty / reasoning-70b for those operations', default: DEFAULT_CHAT_ALIAS }),
    system: Flags.string({ char: 's', description: 'system prompt' }),
    stream: Flags.boolean({ description: 'print the answer as it arrives (--no-stream: all at once)', default: true, allowNo: true }),
    'max-tokens': Flags.integer({ description: 'longest answer, in tokens', min: 1 }),
    temperature: Flags.string({ description: 'sampling temperature, 0 to 2' }),
  }

  async run(): Promise<CompletionBody | void> {
    const prompt = this.args.prompt ?? (process.stdin.isTTY ? undefined : await readStdin())
    const sampling: Sampling = {}
    if (this.flags['max-tokens'] !== undefined) sampling.max_tokens = this.flags['max-tokens']
    if (this.flags.temperature !== undefined) {
      const t = Number(this.flags.temperature)
      if (!Number.isFinite(t) || t < 0 || t > 2) throw new UsageError(`--temperature must be a number from 0 to 2, not "${this.flags.temperature}"`)
      sampling.temperature = t
    }
    const system: ChatMessage[] = this.flags.system ? [{ role: 'system', content: this.flags.system }] : []
    const { openChatBackend } = await import('../../ui/chat-backend.js')
    const backend = await openChatBackend(this.target)
    try {
      if (prompt === undefined || prompt.trim() === '') {
        if (prompt !== undefined || !process.stdout.isTTY || this.jsonEnabled()) throw new UsageError('give a PROMPT, or pipe one on stdin')
        const { runChatSession } = await import('../../ui/chat-session.js')
        await runChatSession({ backend, model: this.flags.model, system, sampling })
        return
      }
      const messages: ChatMessage[] = [...system, { role: 'user', content: prompt }]
      if (this.jsonEnabled() || !this.flags.stream) {
        const body = await backend.complete(this.flags.model, messages, sampling)
        if (!this.jsonEnabled()) {
          if (body.reasoning) this.reasoning(body.reasoning + '\n')
          this.answer(process.stdout.isTTY ? await (await terminalMarkdown()).render(body.answer) : body.answer, true)
        }
        return body
      }
      await this.streamAnswer(backend, messages, sampling)
    } finally {
      await backend.close()
    }
  }

  async streamAnswer(backend: ChatBackend, messages: ChatMessage[], sampling: Sampling) {
    let answer = ''
    let reasoned = false
    // On a terminal, Markdown rendered a block at a time (a block is complete at the next blank line).
    const rendering = process.stdout.isTTY ? new (await import('../../ui/markdown.js')).MarkdownStream(await terminalMarkdown()) : null
    let printed = ''
    for await (const delta of backend.stream(this.flags.model, messages, sampling)) {
      if (delta.reasoning) {
        this.reasoning(delta.reasoning)
        reasoned = true
      }
      if (delta.content) {
        if (reasoned && answer === '') this.reasoning('\n')
        const text = rendering ? await rendering.push(delta.content) : delta.content
        this.answer(text, false)
        answer += delta.content
        printed += text
      }
    }
    if (rendering) {
      const rest = await rendering.end()
      this.answer(rest, false)
      printed += rest
    }
    if (!printed.endsWith('\n')) process.stdout.write('\n')
  }

  answer(text: string, whole: boolean) {
    process.stdout.write(whole && !text.endsWith('\n') ? text + '\n' : text)
  }

  /** Reasoning is for a person watching: stderr, dimmed (unless NO_COLOR), and only on a terminal. */
  reasoning(text: string) {
    if (!process.stderr.isTTY) return
    process.stderr.write(process.env.NO_COLOR ? text : `\x1b[2m${text}\x1b[22m`)
  }
}

async function terminalMarkdown() {
  const { createMarkdownRenderer } = await import('../../ui/markdown.js')
  return createMarkdownRenderer()
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
