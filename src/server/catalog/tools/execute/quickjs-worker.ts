/**
 * A JavaScript sandbox worker: QuickJS compiled to WebAssembly, loaded once per thread, with a fresh
 * runtime and context for every program. The program sees only the language itself plus what the
 * prelude gives it (console, stdin, readline): QuickJS has no process, require, files or network
 * to begin with, and no module loader is installed, so `import` finds nothing.
 */
import { parentPort } from 'node:worker_threads'
import { getQuickJS, type QuickJSContext, type QuickJSHandle } from 'quickjs-emscripten'
import { Capture } from './capture.js'
import type { SandboxJob, SandboxResult } from './job.js'

const port = parentPort
if (!port) throw new Error('quickjs-worker.ts runs as a worker thread')

const engine = getQuickJS()

/**
 * The size of the module's WebAssembly memory. QuickJS's own memory limit misses growth by realloc
 * in this build (no malloc_usable_size), so arrays could grow past it; the Wasm memory cannot hide
 * anything. `module` is the library's Emscripten module, not part of its typed API.
 */
const heapBytes = (quickjs: Awaited<typeof engine>) => (quickjs as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.byteLength

/** After a program grew the Wasm memory this far past its start, the worker is replaced (Wasm memory never shrinks). */
const RECYCLE_GROWTH = 32 * 1024 * 1024
let baseline = 0

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

async function run(job: SandboxJob): Promise<{ result: SandboxResult; recycle: boolean }> {
  const quickjs = await engine
  const started = performance.now()
  const deadline = Date.now() + job.timeoutMs
  const stdout = new Capture(job.outputBytes)
  const stderr = new Capture(job.outputBytes)
  let stopped = false
  let timedOut = false
  let outOfMemory = false
  baseline ||= heapBytes(quickjs)
  const heapLimit = heapBytes(quickjs) + job.memoryBytes
  const runtime = quickjs.newRuntime()
  runtime.setMemoryLimit(job.memoryBytes)
  runtime.setMaxStackSize(1024 * 1024)
  // Called every so many bytecode instructions: the CPU-time and memory caps, and the stop once output passed its cap.
  runtime.setInterruptHandler(() => {
    if (Date.now() > deadline) timedOut = true
    if (heapBytes(quickjs) > heapLimit) outOfMemory = true
    return timedOut || stopped || outOfMemory
  })
  const context = runtime.newContext()
  let exitCode = 0
  try {
    const write = context.newFunction('write', (stream, text) => {
      const capture = context.getNumber(stream) === 2 ? stderr : stdout
      if (!capture.add(context.getString(text))) stopped = true
      // Checked here too: a loop of big writes reaches the interrupt handler only every few hundred writes.
      if (heapBytes(quickjs) > heapLimit) outOfMemory = true
      if (Date.now() > deadline) timedOut = true
      if (stopped || outOfMemory || timedOut) return { error: context.newError('Stopped') }
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
      if (!timedOut && !stopped && !outOfMemory) stderr.add(describeError(context, result.error))
      result.error.dispose()
    } else {
      // Promise jobs (async functions, then) run to the end, under the same interrupt handler.
      while (runtime.hasPendingJob() && !timedOut && !stopped && !outOfMemory) {
        const jobs = runtime.executePendingJobs()
        if (jobs.error) {
          exitCode = 1
          if (!timedOut && !stopped && !outOfMemory) stderr.add(describeError(context, jobs.error))
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
  else if (outOfMemory) stderr.add(`Stopped: the program used more than its ${job.memoryBytes / 1024 ** 2} MiB of memory\n`)
  else if (stopped) stderr.add(`Stopped: the program's output passed ${job.outputBytes} bytes\n`)
  if (timedOut) exitCode = 124
  else if (stopped || outOfMemory) exitCode = 1
  const result = { stdout: stdout.text(), stderr: stderr.text(), exit_code: exitCode, timed_out: timedOut, duration_ms: Math.round(performance.now() - started) }
  return { result, recycle: heapBytes(quickjs) - baseline > RECYCLE_GROWTH }
}

port.on('message', async ({ id, job }: { id: number; job: SandboxJob }) => {
  try {
    port.postMessage({ id, ...(await run(job)) })
  } catch (error) {
    port.postMessage({ id, error: String((error as Error)?.stack ?? error) })
  }
})
