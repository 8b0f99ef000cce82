/**
 * Passwords never come from a flag value (it would sit in shell history and `ps`): they are typed at
 * a prompt with no echo on a TTY, or piped with `--password-stdin` (docker login's convention).
 */
import { UsageError } from './client.js'

/** Reads all of stdin and drops one trailing newline (what `echo` and here-strings add). */
export async function readPasswordFromStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY) throw new UsageError('--password-stdin expects the password on a pipe, e.g. `printf %s "$PW" | plaza social login --email E --password-stdin`')
  const chunks: Buffer[] = []
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk))
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
  if (!password) throw new UsageError('no password on stdin')
  return password
}

/** Prompts on the terminal (prompt on stderr) and reads a line without echoing it. */
export function promptPassword(prompt = 'Password: ', stdin: NodeJS.ReadStream = process.stdin, out: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (!stdin.isTTY) {
    return Promise.reject(new UsageError('no terminal to ask for the password: pipe it with --password-stdin'))
  }
  return new Promise((resolve, reject) => {
    out.write(prompt)
    let value = ''
    const finish = (error?: Error) => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off('data', onData)
      out.write('\n')
      if (error) reject(error)
      else resolve(value)
    }
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish()
        if (char === '\u0003') return finish(new Error('cancelled'))
        if (char === '\u0004' && value === '') return finish(new Error('cancelled'))
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('')
        else if (char >= ' ') value += char
      }
    }
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on('data', onData)
  })
}

/** The password for register/login: from stdin when asked to, else a silent prompt. */
export async function readPassword(fromStdin: boolean, prompt?: string): Promise<string> {
  return fromStdin ? readPasswordFromStdin() : promptPassword(prompt)
}

/**
 * Several passwords piped on stdin, one a line (`plaza social password --password-stdin` takes the
 * current one, then the new one); a password may hold any character but a newline.
 */
export async function readPasswordsFromStdin(count: number, stdin: NodeJS.ReadStream = process.stdin): Promise<string[]> {
  if (stdin.isTTY) throw new UsageError(`--password-stdin expects ${count} lines on a pipe, e.g. \`printf '%s\\n' "$OLD" "$NEW" | plaza social password --password-stdin\``)
  const chunks: Buffer[] = []
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk))
  const lines = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  if (lines.length !== count || lines.some((line) => line === '')) throw new UsageError(`expected ${count} non-empty lines on stdin, one password each`)
  return lines
}
