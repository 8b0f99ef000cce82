/**
 * `--jq EXPR`: the real jq (1.8, compiled to WebAssembly by the `jq-wasm` package, no native
 * binary), loaded only when the flag is given. Strings come out raw, as with gh's `--jq` (`jq -r`).
 */
import { UsageError } from './client.js'

type JqModule = typeof import('jq-wasm')
let loaded: Promise<JqModule> | undefined
const jq = () => (loaded ??= import('jq-wasm'))

/** jq exits 3 when the program does not compile (whatever the input). */
const COMPILE_ERROR = 3

/** jq's stderr spans lines ("jq: error: …", the filter, a caret, "jq: 1 compile error"); keep the line that says what is wrong. */
function jqMessage(stderr: string): string {
  const first = stderr.split('\n').find((line) => line.trim()) ?? 'jq failed'
  return first.replace(/^jq: error(?: \(at [^)]*\))?: /, '').replace(/:$/, '').trim()
}

/** Fails with a usage error (exit 2) before the command does anything, when EXPR is not a jq program. */
export async function checkJq(filter: string): Promise<void> {
  const result = await (await jq()).raw('null', filter, ['-r'])
  if (result.exitCode === COMPILE_ERROR) throw new UsageError(`--jq: ${jqMessage(result.stderr)}`)
}

/** Runs EXPR on a value; the output as jq prints it, without the final newline ('' when it yields nothing). */
export async function runJq(value: unknown, filter: string, compact = false): Promise<string> {
  const result = await (await jq()).raw(JSON.stringify(value ?? null), filter, compact ? ['-r', '-c'] : ['-r'])
  if (result.exitCode !== 0) throw new Error(`--jq: ${jqMessage(result.stderr)}`)
  return result.stdout.replace(/\n$/, '')
}
