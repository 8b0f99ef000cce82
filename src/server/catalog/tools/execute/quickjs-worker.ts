/**
 * A JavaScript sandbox worker: QuickJS compiled to WebAssembly, loaded once per thread, with a fresh
 * runtime and context for every program. The program sees only the language itself plus what the
 * prelude gives it (console, stdin, readline): QuickJS has no process, require, files or network
 * to begin with, and no module loader is installed, so `import` finds nothing.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle } from 'quickjs-emscripten'
import { serveJobs } from '../../../workers/pool.js'
import { Capture } from './capture.js'
import type { SandboxJob, SandboxResult } from './job.js'

const port = parentPort
if (!port) throw new Error('quickjs-worker.ts runs as a worker thread')

/** Room beyond the programs' limit for the engine itself (its code's data, stack, the first 16 MiB it starts with). */
const ENGINE_BYTES = 32 * 1024 * 1024

/**
 * The module's WebAssembly memory has a hard maximum: QuickJS's own memory limit misses growth by
 * realloc in this build (it has no malloc_usable_size), and a program could otherwise grow the
 * memory to 2 GiB. At the maximum, allocations fail and the program gets "out of memory".
 */
const { memoryBytes } = workerData as { memoryBytes: number }
const PAGE = 64 * 1024
const engine = newQuickJSWASMModule(
  newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: 256, maximum: Math.ceil((memoryBytes + ENGINE_BYTES) / PAGE) }) }),
)

/**
 * Runs inside the context before the program: takes the host's one function out of sight and
 * builds console and stdin from it. Values print as Node prints the common cases: strings raw,
 * errors with their stack, the rest as JSON.
 */
const PRELUDE = `(() => {
  const write = globalThis.__plazaWrite
  const input = globalThis.__plazaStdin
  delete globalThis.__plazaWrite
  delete globalThis.__plazaStdin
  const show = (value) => {
    if (typeof value === 'string') return value
    if (value instanceof Error) return value.stack ? value.name + ': ' + value.message + '\\n' + value.stack : value.name + ': ' + value.message
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint' || value === undefined) return String(value)
    try { const text = JSON.stringify(value); return text === undefined ? String(value) : text } catch { return String(value) }
  }
  const line = (args) => args.map(show).join(' ') + '\\n'
  const out = (...args) => write(1, line(args))
  const err = (...args) => write(2, line(args))
  globalThis.console = Object.freeze({ log: out, info: out, debug: out, error: err, warn: err, trace: err })
  globalThis.stdin = input
  const lines = input.split('\\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  let next = 0
  globalThis.readline = () => (next < lines.length ? lines[next++] : null)
})()`

function describeError(context: QuickJSContext, handle: QuickJSHandle): string {
  const error = context.dump(handle) as { name?: string; message?: string; stack?: string } | unknown
  if (error && typeof error === 'object' && 'message' in error) {
    const { name = 'Error', message = '', stack = '' } = error as { name?: string; message?: string; stack?: string }
    return `Uncaught ${name}: ${message}\n${stack}`.trimEnd() + '\n'
  }
  return `Uncaught ${typeof error === 'string' ? error : JSON.stringify(error)}\n`
}

async function run(job: SandboxJob): Promise<SandboxResult> {
  const quickjs = await engine
  const started = performance.now()
  const deadline = Date.now() + job.timeoutMs
  const stdout = new Capture(job.outputBytes)
  const stderr = new Capture(job.outputBytes)
  let stopped = false
  let timedOut = false
  const runtime = quickjs.newRuntime()
  runtime.setMemoryLimit(job.memoryBytes)
  runtime.setMaxStackSize(1024 * 1024)
  // Called every so many bytecode instructions: the CPU-time cap, and the stop once output passed its cap.
  runtime.setInterruptHandler(() => {
    if (Date.now() > deadline) timedOut = true
    return timedOut || stopped
  })
  const context = runtime.newContext()
  let exitCode = 0
  try {
    const write = context.newFunction('write', (stream, text) => {
      const capture = context.getNumber(stream) === 2 ? stderr : stdout
      if (!capture.add(context.getString(text))) stopped = true
      // Checked here too: a loop of big writes reaches the interrupt handler only every few hundred writes.
      if (Date.now() > deadline) timedOut = true
      if (stopped || timedOut) return { error: context.newError('Stopped') }
    })
    context.setProp(context.global, '__plazaWrite', write)
    write.dispose()
    const input = context.newString(job.stdin)
    context.setProp(context.global, '__plazaStdin', input)
    input.dispose()
    context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js')).dispose()

    const result = context.evalCode(job.code, 'main.js')
    if (result.error) {
      exitCode = 1
      if (!timedOut && !stopped) stderr.add(describeError(context, result.error))
      result.error.dispose()
    } else {
      // Promise jobs (async functions, then) run to the end, under the same interrupt handler.
      while (runtime.hasPendingJob() && !timedOut && !stopped) {
        const jobs = runtime.executePendingJobs()
        if (jobs.error) {
          exitCode = 1
          if (!timedOut && !stopped) stderr.add(describeError(context, jobs.error))
          jobs.error.dispose()
          break
        }
      }
      const state = context.getPromiseState(result.value)
      if (state.type === 'rejected') {
        exitCode = 1
        stderr.add(describeError(context, state.error))
        state.error.dispose()
      } else if (state.type === 'fulfilled' && !state.notAPromise) state.value.dispose()
      result.value.dispose()
    }
  } finally {
    context.dispose()
    runtime.dispose()
  }
  if (timedOut) stderr.add(`Stopped: the program ran past its ${job.timeoutMs / 1000} s time limit\n`)
  else if (stopped) stderr.add(`Stopped: the program's output passed ${job.outputBytes} bytes\n`)
  if (timedOut) exitCode = 124
  else if (stopped) exitCode = 1
  return { stdout: stdout.text(), stderr: stderr.text(), exit_code: exitCode, timed_out: timedOut, duration_ms: Math.round(performance.now() - started) }
}

// Ready once QuickJS is loaded: a program's time limit never counts the worker's start-up.
serveJobs<SandboxJob, SandboxResult>(port, run, { transfer: () => [], refusal: () => null, ready: engine })
