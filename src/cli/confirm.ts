/**
 * Confirmation before what cannot be undone: a question on a terminal, `--yes` for scripts. Without
 * a terminal and without `--yes` it is a usage error (exit 2), never a silent yes.
 */
import { createInterface } from 'node:readline/promises'
import { UsageError } from './client.js'

/** Fails fast (exit 2) when confirmation would be needed and there is no terminal to ask on. */
export function assertCanConfirm(yes: boolean, stdin: NodeJS.ReadStream = process.stdin): void {
  if (!yes && !stdin.isTTY) throw new UsageError('this cannot be undone: confirm with --yes (there is no terminal to ask on)')
}

/** Asks on stderr and reads one line from the terminal. */
async function ask(question: string, stdin: NodeJS.ReadStream, out: NodeJS.WriteStream): Promise<string> {
  const rl = createInterface({ input: stdin, output: out, terminal: true })
  try {
    return (await rl.question(question)).trim()
  } finally {
    rl.close()
  }
}

/**
 * Resolves when the person confirmed: `--yes` given, or on a terminal the answer `y`/`yes` (or,
 * with `expected`, exactly that text, as GitHub asks for a repository's name). Throws otherwise.
 */
export async function confirmOrExit(
  options: { yes: boolean; question: string; expected?: string },
  stdin: NodeJS.ReadStream = process.stdin,
  out: NodeJS.WriteStream = process.stderr,
): Promise<void> {
  assertCanConfirm(options.yes, stdin)
  if (options.yes) return
  const answer = await ask(options.question, stdin, out)
  const confirmed = options.expected === undefined ? /^y(es)?$/i.test(answer) : answer === options.expected
  if (!confirmed) throw new Error('not confirmed; nothing was deleted')
}
