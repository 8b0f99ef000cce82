/**
 * The JavaScript sandbox's worker threads, in the shape of codeimage's RenderPool: each worker
 * keeps its QuickJS module loaded and runs one program at a time. QuickJS's interrupt handler
 * enforces the time limit inside the worker; a worker that overruns it anyway (the backstop) or
 * dies is terminated and replaced, and its program answers as stopped.
 */
import { Worker } from 'node:worker_threads'
import { TRPCError } from '@trpc/server'
import type { SandboxJob, SandboxResult } from './job.js'

/** Beyond the program's own limit, how long the interrupt handler has to stop it before the thread is terminated. */
const BACKSTOP_MS = 2000
/** A new worker that has not loaded QuickJS in this long is given up on. */
const START_TIMEOUT_MS = 30_000

interface Pending {
  job: SandboxJob
  started: number
  resolve: (result: SandboxResult) => void
}

interface Slot {
  worker: Worker
  busy: Pending | null
  timer?: NodeJS.Timeout
}

/** Starts quickjs-worker.ts; from the TypeScript sources (tests, tsx) it registers tsx inside the worker first. */
function startWorker(memoryBytes: number): Worker {
  const here = new URL(import.meta.url)
  // The worker holds nothing but the interpreter: a small heap of its own (QuickJS's memory is Wasm, capped separately).
  const options = { resourceLimits: { maxOldGenerationSizeMb: 128 }, workerData: { memoryBytes } }
  if (here.pathname.endsWith('.ts')) {
    const target = new URL('./quickjs-worker.ts', here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { eval: true, ...options })
  }
  return new Worker(new URL('./quickjs-worker.js', here), options)
}

const stoppedResult = (pending: Pending, reason: string, timedOut: boolean): SandboxResult => ({
  stdout: '',
  stderr: `${reason}\n`,
  exit_code: timedOut ? 124 : 1,
  timed_out: timedOut,
  duration_ms: Math.round(performance.now() - pending.started),
})

export class QuickJsPool {
  private readonly slots: Slot[] = []
  private readonly queue: Pending[] = []
  private nextId = 0
  private closed = false

  /** `memoryBytes`: each program's memory (and so each worker's WebAssembly memory, plus the engine's own). */
  constructor(
    private readonly size: number,
    private readonly memoryBytes: number,
  ) {}

  run(job: SandboxJob): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The JavaScript sandbox is shutting down' }))
    return new Promise((resolve) => {
      const pending = { job, resolve, started: performance.now() }
      const slot = this.slots.find((s) => !s.busy) ?? (this.slots.length < this.size ? this.spawn() : null)
      if (slot) this.start(slot, pending)
      else this.queue.push(pending)
    })
  }

  async close() {
    this.closed = true
    for (const pending of this.queue.splice(0)) pending.resolve(stoppedResult(pending, 'Stopped: the server is shutting down', false))
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()))
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startWorker(this.memoryBytes), busy: null }
    slot.worker.unref()
    slot.worker.on('message', (message: { started?: boolean; result?: SandboxResult; error?: string }) => {
      const pending = slot.busy
      if (!pending) return
      if (message.started) this.limit(slot, pending, pending.job.timeoutMs + BACKSTOP_MS)
      else if (message.result) this.finish(slot, message.result)
      else this.replace(slot, stoppedResult(pending, `The sandbox failed: ${message.error}`, false))
    })
    slot.worker.on('error', (error) => slot.busy && this.replace(slot, stoppedResult(slot.busy, `The sandbox stopped: ${error.message}`, false)))
    slot.worker.on('exit', () => this.replace(slot, slot.busy && stoppedResult(slot.busy, 'The sandbox stopped unexpectedly', false)))
    this.slots.push(slot)
    return slot
  }

  private start(slot: Slot, pending: Pending) {
    slot.busy = pending
    this.limit(slot, pending, START_TIMEOUT_MS)
    slot.worker.postMessage({ id: this.nextId++, job: pending.job })
  }

  /** (Re)sets the time after which the worker is terminated and the program answers as timed out. */
  private limit(slot: Slot, pending: Pending, ms: number) {
    clearTimeout(slot.timer)
    pending.started = performance.now()
    slot.timer = setTimeout(() => {
      this.replace(slot, stoppedResult(pending, `Stopped: the program ran past its ${pending.job.timeoutMs / 1000} s time limit`, true))
    }, ms)
  }

  private finish(slot: Slot, result: SandboxResult) {
    clearTimeout(slot.timer)
    const pending = slot.busy!
    slot.busy = null
    pending.resolve(result)
    this.next(slot)
  }

  /** Drops a worker that failed, died or overran; its program gets `result`, and the queue moves on with a fresh worker. */
  private replace(slot: Slot, result: SandboxResult | null) {
    const index = this.slots.indexOf(slot)
    if (index < 0) return
    this.slots.splice(index, 1)
    clearTimeout(slot.timer)
    slot.worker.removeAllListeners()
    slot.worker.on('error', () => {})
    void slot.worker.terminate()
    if (slot.busy && result) slot.busy.resolve(result)
    slot.busy = null
    if (this.queue.length && !this.closed) this.next(this.spawn())
  }

  private next(slot: Slot) {
    const pending = this.queue.shift()
    if (pending) this.start(slot, pending)
  }
}
