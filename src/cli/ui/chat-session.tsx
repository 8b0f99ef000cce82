/**
 * The interactive chat of `plaza util chat` on a terminal (no prompt given): an ink app that keeps
 * the conversation, streams each answer as it arrives with its reasoning dimmed, and sends the
 * whole history with every turn. `/reset` starts over; `/exit`, Ctrl+C or Ctrl+D leave.
 */
import type { RenderOptions } from 'ink'
import type { ChatMessage, Sampling } from '../../shared/schemas/chat.js'
import type { ChatBackend } from './chat-backend.js'

export interface ChatSessionOptions {
  backend: ChatBackend
  model: string
  system: ChatMessage[]
  sampling: Sampling
  /** Where ink reads keys and draws: the process's terminal unless given (tests pass fake streams). */
  ink?: Pick<RenderOptions, 'stdin' | 'stdout' | 'stderr' | 'debug' | 'patchConsole'>
}

interface Turn {
  role: 'user' | 'assistant' | 'error' | 'note'
  text: string
  reasoning?: string
}

export async function runChatSession(options: ChatSessionOptions): Promise<void> {
  // As in render.ts: chalk reads FORCE_COLOR but not NO_COLOR, so translate before ink loads.
  if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0'
  const [{ render, Box, Static, Text, useApp, useInput }, { useRef, useState }] = await Promise.all([import('ink'), import('react')])

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
    const [turns, setTurns] = useState<Turn[]>([{ role: 'note', text: `Chatting with ${options.model}. /reset starts over, /exit or Ctrl+D leaves.` }])
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
      history.current.push({ role: 'user', content: text })
      setTurns((t) => [...t, { role: 'user', text }])
      let answer = ''
      let reasoning = ''
      setPending({ role: 'assistant', text: '' })
      try {
        for await (const delta of options.backend.stream(options.model, history.current, options.sampling)) {
          answer += delta.content ?? ''
          reasoning += delta.reasoning ?? ''
          setPending({ role: 'assistant', text: answer, reasoning })
        }
        // The answer alone goes back as history; providers ask not to be sent their reasoning again.
        history.current.push({ role: 'assistant', content: answer })
        setTurns((t) => [...t, { role: 'assistant', text: answer, reasoning }])
      } catch (error) {
        history.current.pop()
        setTurns((t) => [...t, { role: 'error', text: (error as Error).message }])
      } finally {
        busy.current = false
        setPending(null)
      }
    }

    useInput((char, key) => {
      if (key.ctrl && (char === 'c' || char === 'd')) return exit()
      if (busy.current) return
      if (key.return) {
        const text = line.current.trim()
        edit('')
        if (!text) return
        if (text === '/exit' || text === '/quit') return exit()
        if (text === '/reset') {
          history.current = [...options.system]
          setTurns((t) => [...t, { role: 'note', text: '(conversation cleared)' }])
          return
        }
        void ask(text)
      } else if (key.backspace || key.delete) {
        edit(line.current.slice(0, -1))
      } else if (char && !key.ctrl && !key.meta) {
        // A pasted block arrives as one piece: its line breaks stay line breaks of the prompt.
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
  await app.waitUntilExit()
}
