/**
 * The interactive chat of `plaza util chat` on a terminal (no prompt given): an ink app that keeps
 * the conversation, streams each answer as it arrives with its reasoning dimmed and its Markdown
 * rendered (markdown.ts), and sends the whole history with every turn. Ctrl+C during an answer
 * stops it (the request is aborted) and keeps the session; at the prompt it clears the line, and
 * on an empty one leaves. Ctrl+D sends the line being typed, and on an empty one leaves. A paste
 * (one chunk, line breaks and all) stays in the line until Enter sends it as one message.
 * `/reset` starts over; `/exit` leaves.
 */
import type { RenderOptions } from 'ink'
import type { ChatMessage, Sampling } from '../../shared/schemas/chat.js'
import type { ChatBackend } from './chat-backend.js'
import type { MarkdownOptions } from './markdown.js'

export interface ChatSessionOptions {
  backend: ChatBackend
  model: string
  system: ChatMessage[]
  sampling: Sampling
  /** Where ink reads keys and draws: the process's terminal unless given (tests pass fake streams). */
  ink?: Pick<RenderOptions, 'stdin' | 'stdout' | 'stderr' | 'debug' | 'patchConsole'>
  /** How answers' Markdown is drawn (default: the terminal's colours and width). */
  markdown?: MarkdownOptions
}

interface Turn {
  role: 'user' | 'assistant' | 'error' | 'note'
  text: string
  reasoning?: string
}

export async function runChatSession(options: ChatSessionOptions): Promise<void> {
  // As in render.ts: chalk reads FORCE_COLOR but not NO_COLOR, so translate before ink loads.
  if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0'
  const [{ render, Box, Static, Text, useApp, useInput }, { useRef, useState }, { createMarkdownRenderer, MarkdownStream }] = await Promise.all([
    import('ink'),
    import('react'),
    import('./markdown.js'),
  ])
  const markdown = createMarkdownRenderer({ width: options.ink?.stdout?.columns, ...options.markdown })
  // The answer in flight, to stop on Ctrl+C (or when the session ends under it).
  const inflight: { current: AbortController | null } = { current: null }

  function TurnView({ turn }: { turn: Turn }) {
    if (turn.role === 'user') {
      return (
        <Text>
          <Text color="cyan" bold>
            you›{' '}
          </Text>
          {turn.text}
        </Text>
      )
    }
    if (turn.role === 'error') return <Text color="red">error: {turn.text}</Text>
    if (turn.role === 'note') return <Text dimColor>{turn.text}</Text>
    return (
      <Box flexDirection="column" marginBottom={1}>
        {turn.reasoning ? <Text dimColor>{turn.reasoning}</Text> : null}
        <Text>{turn.text}</Text>
      </Box>
    )
  }

  function ChatSession() {
    const { exit } = useApp()
    const [turns, setTurns] = useState<Turn[]>([
      { role: 'note', text: `Chatting with ${options.model}. Ctrl+C stops an answer; /reset starts over; /exit, or Ctrl+C or Ctrl+D on an empty line, leaves.` },
    ])
    const [input, setInput] = useState('')
    const [pending, setPending] = useState<Turn | null>(null)
    const history = useRef<ChatMessage[]>([...options.system])
    // The key handler reads these refs, not the state: ink re-subscribes it only once a render's
    // effects have run, so a key that arrives before then (Enter right after the last letter) would
    // see the previous line and lose the prompt, or start a second answer while one streams.
    const line = useRef('')
    const busy = useRef(false)
    const edit = (text: string) => {
      line.current = text
      setInput(text)
    }

    async function ask(text: string) {
      busy.current = true
      const controller = new AbortController()
      inflight.current = controller
      history.current.push({ role: 'user', content: text })
      setTurns((t) => [...t, { role: 'user', text }])
      let answer = ''
      let reasoning = ''
      // What the terminal shows of the answer: its complete blocks rendered, the block still arriving as it is.
      const rendering = new MarkdownStream(markdown)
      let shown = ''
      setPending({ role: 'assistant', text: '' })
      try {
        for await (const delta of options.backend.stream(options.model, history.current, options.sampling, controller.signal)) {
          answer += delta.content ?? ''
          reasoning += delta.reasoning ?? ''
          if (delta.content) shown += await rendering.push(delta.content)
          setPending({ role: 'assistant', text: shown + rendering.pending(), reasoning })
        }
        if (controller.signal.aborted) throw new Error('stopped')
        shown += await rendering.end()
        // The answer alone goes back as history; providers ask not to be sent their reasoning again.
        history.current.push({ role: 'assistant', content: answer })
        setTurns((t) => [...t, { role: 'assistant', text: shown, reasoning }])
      } catch (error) {
        // A question without its (whole) answer is not sent again.
        history.current.pop()
        if (controller.signal.aborted) {
          const partial = shown + rendering.pending()
          setTurns((t) => [...t, ...(partial || reasoning ? [{ role: 'assistant' as const, text: partial, reasoning }] : []), { role: 'note', text: '(answer stopped)' }])
        } else {
          setTurns((t) => [...t, { role: 'error', text: (error as Error).message }])
        }
      } finally {
        if (inflight.current === controller) inflight.current = null
        busy.current = false
        setPending(null)
      }
    }

    const leave = () => {
      inflight.current?.abort()
      exit()
    }

    /** Sends a line (Enter, or Ctrl+D with text): a command, or a question. */
    function submit() {
      const text = line.current.trim()
      edit('')
      if (!text) return
      if (text === '/exit' || text === '/quit') return leave()
      if (text === '/reset') {
        history.current = [...options.system]
        setTurns((t) => [...t, { role: 'note', text: '(conversation cleared)' }])
        return
      }
      void ask(text)
    }

    useInput((char, key) => {
      if (key.ctrl && char === 'c') {
        if (busy.current) return inflight.current?.abort()
        if (line.current) return edit('')
        return leave()
      }
      if (key.ctrl && char === 'd') {
        if (busy.current || !line.current.trim()) return leave()
        return submit()
      }
      if (busy.current) return
      if (key.return) {
        submit()
      } else if (key.backspace || key.delete) {
        edit(line.current.slice(0, -1))
      } else if (char && !key.ctrl && !key.meta) {
        // A pasted block arrives as one piece: its line breaks stay line breaks of the prompt, sent with it on Enter.
        edit(line.current + char.replace(/\r\n?/g, '\n'))
      }
    })

    return (
      <>
        <Static items={turns}>{(turn, i) => <TurnView key={i} turn={turn} />}</Static>
        {pending ? (
          <TurnView turn={pending} />
        ) : (
          <Text>
            <Text color="cyan" bold>
              you›{' '}
            </Text>
            {input}
            <Text inverse> </Text>
          </Text>
        )}
      </>
    )
  }

  const app = render(<ChatSession />, { exitOnCtrlC: false, ...options.ink })
  try {
    await app.waitUntilExit()
  } finally {
    inflight.current?.abort()
  }
}
