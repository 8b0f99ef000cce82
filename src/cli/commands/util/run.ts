import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Args, Flags } from '@oclif/core'
import { MAX_CODE_BYTES, type ExecuteInput, type ExecuteResult } from '../../../shared/schemas/execute.js'
import { PlazaCommand, UsageError } from '../../base.js'
import { reach } from '../../client.js'

/** The language of a file by its extension: the local sandboxes' and Piston's common ones. */
const LANGUAGE_OF_EXTENSION: Record<string, string> = {
  '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.py': 'python',
  '.go': 'go', '.rs': 'rust', '.c': 'c', '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.java': 'java', '.rb': 'ruby',
  '.sh': 'bash', '.bash': 'bash', '.ts': 'typescript', '.php': 'php', '.lua': 'lua', '.pl': 'perl', '.kt': 'kotlin',
  '.swift': 'swift', '.cs': 'csharp', '.hs': 'haskell', '.scala': 'scala', '.r': 'r', '.dart': 'dart', '.ex': 'elixir',
  '.exs': 'elixir', '.jl': 'julia', '.zig': 'zig', '.nim': 'nim', '.ml': 'ocaml', '.sql': 'sqlite3',
}

export type RunOutput = ExecuteResult & { message: string }

export default class UtilRun extends PlazaCommand<typeof UtilRun> {
  static override description =
    'Run a program in the sandbox of POST /api/execute (JavaScript and Python in Plaza; other languages through the server\'s Piston provider) and exit with its exit code.'
  static override examples = [
    '<%= config.bin %> util run hello.py',
    'echo "console.log(stdin.toUpperCase())" | <%= config.bin %> util run - --language js --stdin input.txt',
    '<%= config.bin %> util run main.go --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    file: Args.string({ description: 'the program; - reads it from standard input', required: true }),
  }
  static override flags = {
    language: Flags.string({ char: 'l', description: 'javascript, python, or a Piston language; default: from the file extension' }),
    stdin: Flags.string({ description: 'a file whose content is the program\'s standard input' }),
  }

  async run(): Promise<RunOutput> {
    const { flags } = this
    const file = this.args.file === '-' ? null : this.args.file
    const language = flags.language ?? (file ? LANGUAGE_OF_EXTENSION[path.extname(file).toLowerCase()] : undefined)
    if (!language) throw new UsageError(file ? `cannot tell the language of ${file} from its extension: give --language` : 'give --language when the program comes from standard input')
    const code = file ? await readSource(file) : await readStdin()
    const input: ExecuteInput = { language, code, stdin: flags.stdin === undefined ? undefined : await readSource(flags.stdin) }
    const result = this.target.kind === 'remote' ? await runRemote(this.target.url, input) : await runEmbedded(input)
    if (!this.jsonEnabled()) {
      process.stdout.write(result.stdout)
      process.stderr.write(result.stderr)
    }
    // The program's exit code is the command's, with --json too (after the answer is printed).
    process.exitCode = result.exit_code
    return result
  }
}

async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message}`)
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('give a FILE, or pipe the program in (e.g. `cat main.py | plaza util run - --language python`)')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    // A little past the limit, so that the server's own 400 explains it.
    if (size > MAX_CODE_BYTES * 2) break
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function runEmbedded(input: ExecuteInput): Promise<RunOutput> {
  // The sandboxes alone: no database or data directory is needed to run a program.
  const [{ executeInput }, { createExecuteService }] = await Promise.all([
    import('../../../shared/schemas/execute.js'),
    import('../../../server/catalog/tools/execute/service.js'),
  ])
  const parsed = executeInput.safeParse(input)
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('; '))
  const service = createExecuteService(process.env)
  try {
    const result = await service.run(parsed.data)
    return { message: `${result.language} program ${result.timed_out ? 'timed out' : `exited with ${result.exit_code}`} after ${result.duration_ms} ms`, ...result }
  } finally {
    await service.close()
  }
}

async function runRemote(url: string, input: ExecuteInput): Promise<RunOutput> {
  const response = await reach(url, `${url}/api/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) })
  const body = (response.headers.get('content-type') ?? '').includes('json') ? ((await response.json()) as Partial<RunOutput>) : null
  if (!response.ok) throw new Error(body?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`)
  if (typeof body?.exit_code !== 'number') throw new Error(`unexpected answer from ${url}: is it a Plaza server?`)
  return body as RunOutput
}
