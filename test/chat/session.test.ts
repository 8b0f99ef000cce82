/**
 * The interactive chat of `plaza util chat` (src/cli/ui/chat-session.tsx), rendered by ink against a
 * fake terminal, talking through the embedded gateway to a loopback OpenAI-compatible provider:
 * keys typed in, frames read back.
 */
import { EventEmitter } from 'node:events'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openChatBackend, type ChatBackend } from '../../src/cli/ui/chat-backend.js'
import { runChatSession } from '../../src/cli/ui/chat-session.js'
import { reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'

/** What ink draws on: in debug mode every write is a whole frame (static output included). */
class FakeStdout extends EventEmitter {
  readonly columns = 100
  readonly rows = 40
  readonly isTTY = false
  readonly frames: string[] = []
  write(frame: string) {
    this.frames.push(frame)
    return true
  }
  /** The screen now, without colour codes; trailing blanks dropped. */
  lastFrame(): string {
    return (this.frames.at(-1) ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\s+$/, '')
  }
}

/** Keys for ink: a raw-mode-capable stream it reads on 'readable'. */
class FakeStdin extends EventEmitter {
  readonly isTTY = true
  private pending: string | null = null
  write(data: string) {
    this.pending = data
    this.emit('readable')
  }
  read(): string | null {
    const data = this.pending
    this.pending = null
    return data
  }
  setEncoding() {}
  setRawMode() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
}

const PROMPT = 'you›'

async function waitFor(what: string, check: () => boolean, stdout: FakeStdout, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}; the screen:\n${stdout.lastFrame()}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

interface Ctx {
  fake: FakeUpstream
  backend: ChatBackend
  stdin: FakeStdin
  stdout: FakeStdout
  session: Promise<void>
}

const session = suite<Ctx>('plaza util chat: the interactive session (ink)')

/** A session on a fake terminal, through the embedded gateway to a fresh fake provider. */
async function start(ctx: Ctx, markdown?: { colorLevel: 0 | 3 }) {
  ctx.fake = await startFakeUpstream()
  ctx.backend = await openChatBackend({ kind: 'embedded', dataDir: '' }, { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'fake-model' })
  ctx.stdin = new FakeStdin()
  ctx.stdout = new FakeStdout()
  const stderr = new FakeStdout()
  ctx.session = runChatSession({
    backend: ctx.backend,
    model: 'modelg-4o-mini',
    system: [{ role: 'system', content: 'Be brief.' }],
    sampling: { max_tokens: 50 },
    ink: { stdin: ctx.stdin as never, stdout: ctx.stdout as never, stderr: stderr as never, debug: true, patchConsole: false },
    markdown,
  })
}

session.before((ctx) => start(ctx))

session.after(async (ctx) => {
  await ctx.backend.close()
  await ctx.fake.close()
})

/** Types a line and Enter at once, as a quick typist does (before ink has re-rendered in between). */
function say({ stdin }: Ctx, text: string) {
  stdin.write(text)
  stdin.write('\r')
}

/** The answer has been stored and the input line is back. */
const idle = (stdout: FakeStdout, answer: string) => {
  const frame = stdout.lastFrame()
  return frame.includes(answer) && frame.split('\n').at(-1) === PROMPT
}

session('streams the answer as it arrives, with the reasoning shown', async (ctx) => {
  const { fake, stdout } = ctx
  await waitFor('the greeting', () => stdout.lastFrame().includes('Chatting with modelg-4o-mini'), stdout)
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  fake.enqueue(reply({ pieces: ['<think>Pondering.</think>', 'First', ' answer.'], pauseAfter: { events: 2, until: released } }))
  // Key by key, with a typo taken back.
  for (const key of [...'Hello therr', '\x7f', 'e']) ctx.stdin.write(key)
  await waitFor('the typed line', () => stdout.lastFrame().split('\n').at(-1) === `${PROMPT} Hello there`, stdout)
  ctx.stdin.write('\r')
  // Half the answer is on the screen while the provider still holds the rest.
  await waitFor('the first piece', () => stdout.lastFrame().includes('First'), stdout)
  const half = stdout.lastFrame()
  assert.not.ok(half.includes('First answer.'))
  assert.ok(half.includes('Pondering.'), half)
  assert.not.ok(half.includes('<think>'), 'the think tags are not shown')
  assert.not.ok(half.split('\n').at(-1)!.startsWith(PROMPT), 'no input line while answering')
  release()
  await waitFor('the whole answer', () => idle(stdout, 'First answer.'), stdout)
  assert.ok(stdout.lastFrame().includes(`${PROMPT} Hello there`), 'the question stays on screen')

  const request = fake.requests.at(-1)!.body
  assert.is(request.stream, true)
  assert.is(request.max_tokens, 50)
  assert.equal(request.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello there' },
  ])
})

session('keeps the conversation: the next turn sends the first exchange (the answer, not the reasoning)', async (ctx) => {
  const { fake, stdout } = ctx
  fake.enqueue(reply({ pieces: ['Second', ' answer.'] }))
  say(ctx, 'And again?')
  await waitFor('the second answer', () => idle(stdout, 'Second answer.'), stdout)
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello there' },
    { role: 'assistant', content: 'First answer.' },
    { role: 'user', content: 'And again?' },
  ])
  const frame = stdout.lastFrame()
  assert.ok(frame.indexOf('First answer.') < frame.indexOf(`${PROMPT} And again?`), 'the transcript is in order')
})

session('/reset clears the conversation (the system prompt stays); Ctrl+D leaves', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  const before = fake.requests.length
  say(ctx, '/reset')
  await waitFor('the cleared note', () => stdout.lastFrame().includes('(conversation cleared)') && stdout.lastFrame().split('\n').at(-1) === PROMPT, stdout)
  assert.is(fake.requests.length, before, '/reset is not sent to the model')
  fake.enqueue(reply({ pieces: ['Fresh', ' answer.'] }))
  say(ctx, 'Who are you?')
  await waitFor('the answer after the reset', () => idle(stdout, 'Fresh answer.'), stdout)
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Who are you?' },
  ])
  stdin.write('\x04')
  await ended(ctx, 'Ctrl+D')
})

session.run()

/** The session's promise settles (ink unmounted): it ended. */
async function ended(ctx: Ctx, what: string) {
  await Promise.race([ctx.session, new Promise((_, reject) => setTimeout(() => reject(new Error(`the session did not end on ${what}`)), 60_000))])
}

const keys = suite<Ctx>('plaza util chat: Ctrl+C, Ctrl+D and pasted lines')

keys.before((ctx) => start(ctx))

keys.after(async (ctx) => {
  await ctx.backend.close()
  await ctx.fake.close()
})

keys('Ctrl+C during an answer stops it: the request to the provider is aborted, the session stays', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  await waitFor('the greeting', () => stdout.lastFrame().includes('Chatting with'), stdout)
  let release!: () => void
  const never = new Promise<void>((resolve) => (release = resolve))
  fake.enqueue(reply({ pieces: ['Counting: one,', ' two,', ' three.'], pauseAfter: { events: 1, until: never } }))
  say(ctx, 'Count to a million')
  await waitFor('the first piece', () => stdout.lastFrame().includes('Counting: one,'), stdout)
  const request = fake.requests.at(-1)!
  let closed = false
  void request.aborted.then(() => (closed = true))
  stdin.write('\x03')
  await waitFor('the provider to see the connection close', () => closed, stdout)
  await waitFor('the prompt back', () => stdout.lastFrame().includes('(answer stopped)') && stdout.lastFrame().split('\n').at(-1) === PROMPT, stdout)
  assert.ok(stdout.lastFrame().includes('Counting: one,'), 'the part that arrived stays on screen')
  assert.not.ok(stdout.lastFrame().includes('two,'))
  release()

  // Still chatting; the stopped question is not sent again.
  fake.enqueue(reply({ pieces: ['Fine.'] }))
  say(ctx, 'Just say fine')
  await waitFor('the next answer', () => idle(stdout, 'Fine.'), stdout)
  assert.equal(fake.requests.at(-1)!.body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Just say fine' },
  ])
})

keys('a paste with line breaks stays in the line and goes as one message on Enter', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  const before = fake.requests.length
  // A terminal delivers a paste as one chunk, its line breaks as carriage returns.
  stdin.write('Review this:\rconst a = 1\rconst b = 2\r')
  await waitFor('the pasted lines', () => stdout.lastFrame().includes('const b = 2'), stdout)
  assert.is(fake.requests.length, before, 'nothing sent on the paste itself')
  assert.ok(stdout.lastFrame().includes(`${PROMPT} Review this:\nconst a = 1\nconst b = 2`), stdout.lastFrame())
  fake.enqueue(reply({ pieces: ['Looks fine.'] }))
  stdin.write('\r')
  await waitFor('the answer', () => idle(stdout, 'Looks fine.'), stdout)
  assert.is(fake.requests.length, before + 1, 'one message')
  assert.equal(fake.requests.at(-1)!.body.messages.at(-1), { role: 'user', content: 'Review this:\nconst a = 1\nconst b = 2' })
})

keys('Ctrl+D with text in the line sends it instead of dropping it', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  fake.enqueue(reply({ pieces: ['Sent anyway.'] }))
  stdin.write('pasted line\r')
  await waitFor('the pasted line', () => stdout.lastFrame().split('\n').at(-1) === `${PROMPT} pasted line`, stdout)
  stdin.write('\x04')
  await waitFor('the answer', () => idle(stdout, 'Sent anyway.'), stdout)
  assert.equal(fake.requests.at(-1)!.body.messages.at(-1), { role: 'user', content: 'pasted line' })
})

keys('Ctrl+C at the prompt clears the line, and on an empty line leaves', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  const before = fake.requests.length
  for (const key of [...'never mind']) stdin.write(key)
  await waitFor('the typed line', () => stdout.lastFrame().split('\n').at(-1) === `${PROMPT} never mind`, stdout)
  stdin.write('\x03')
  await waitFor('the cleared line', () => stdout.lastFrame().split('\n').at(-1) === PROMPT, stdout)
  stdin.write('\x03')
  await ended(ctx, 'a second Ctrl+C')
  assert.is(fake.requests.length, before, 'nothing was sent')
})

keys.run()

const markdown = suite<Ctx>('plaza util chat: Markdown on the terminal')

markdown.before((ctx) => start(ctx, { colorLevel: 3 }))

markdown.after(async (ctx) => {
  await ctx.backend.close()
  await ctx.fake.close()
})

markdown('headings, bold, lists and code blocks are rendered, the code highlighted with the code images\' palette', async (ctx) => {
  const { fake, stdout, stdin } = ctx
  await waitFor('the greeting', () => stdout.lastFrame().includes('Chatting with'), stdout)
  fake.enqueue(reply({ pieces: ['# Plan\n\nUse **two** steps:\n\n', '- first\n- second\n\n', '```js\nlet x = 5;\n```\n'] }))
  say(ctx, 'Plan?')
  await waitFor('the answer', () => idle(stdout, 'let x = 5;'), stdout)
  const raw = stdout.frames.at(-1)!
  const plain = stdout.lastFrame()
  assert.ok(plain.includes('# Plan') && plain.includes('Use two steps:'), plain)
  assert.not.ok(plain.includes('**'), 'no raw emphasis markers')
  assert.not.ok(plain.includes('```'), 'no raw code fences')
  assert.match(plain, /\* first\n\s*\* second/)
  assert.ok(raw.includes('\x1b[1mtwo\x1b[22m'), 'bold is bold')
  // candy (dark), the code images' default theme: keyword FF659C, number 7A7FFD.
  assert.ok(raw.includes('\x1b[38;2;255;101;156mlet'), 'the keyword in the keyword colour')
  assert.ok(raw.includes('\x1b[38;2;122;127;253m5'), 'the number in the number colour')
  // The history keeps the model's own text.
  say(ctx, '/exit')
  await ended(ctx, '/exit')
})

markdown.run()
