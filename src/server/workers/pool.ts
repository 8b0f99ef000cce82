/**
 * The bounded worker pool behind every CPU-heavy job type (code images, speech, the Maker's cards):
 * jobs run in worker threads, at most `size` at a time; each has a time budget, and a worker that
 * overruns it is terminated (the only way to stop a busy thread) and replaced, the job failing with
 * 503. Jobs past the queue's capacity are refused at once rather than piling up.
 */
import * as threads from 'node:worker_threads'
import { Worker, type MessagePort } from 'node:worker_threads'
import { TRPCError } from '@trpc/server'
import type { ErrorCases } from '../errors.js'

/** What a job of any pool can answer: refused while the queue is full, or past its time budget (ErrorCases in errors.ts). */
export const POOL_ERRORS: ErrorCases = {
  503: 'The server is busy with other jobs of this kind, or this one took longer than its time budget; try again shortly',
}

export interface PoolOptions {
  size: number
  timeoutMs: number
  /** Jobs that may wait for a free worker. */
  queueLimit: number
}

/** What a pool says to its callers, in the words of its job type. */
export interface PoolTexts {
  /** The failure of a pool that is closing. */
  shuttingDown: string
  /** The error of a job refused because the queue is full. */
  busy(): Error
  /** The 503's message for a job past its time budget. */
  overran(seconds: number): string
  /** Names the workers in internal errors: `render`, `speech`. */
  worker: string
}

interface Pending<Job, Result> {
  job: Job
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

interface Slot<Job, Result> {
  worker: Worker
  busy: Pending<Job, Result> | null
  timer?: NodeJS.Timeout
}

type WorkerMessage<Result> = { result?: Result; refusal?: { status: number; message: string }; error?: string; code?: string }

const REFUSAL_CODES: Record<number, TRPCError['code']> = { 400: 'BAD_REQUEST', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 503: 'SERVICE_UNAVAILABLE' }

/**
 * Starts the worker module `name` next to `base` (an `import.meta.url`); from the TypeScript
 * sources (tests, tsx) it registers tsx inside the worker first.
 */
function startWorker(base: string, name: string): Worker {
  const here = new URL(base)
  if (here.pathname.endsWith('.ts')) {
    const target = new URL(`./${name}.ts`, here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { eval: true })
  }
  return new Worker(new URL(`./${name}.js`, here))
}

/** Node 21+ says which buffers cannot be moved (Node 20 has no such check, and copies them silently). */
const untransferable = (threads as { isMarkedAsUntransferable?: (value: unknown) => boolean }).isMarkedAsUntransferable

/**
 * The buffers of `buffers` that can be moved to another thread. Buffers made by native modules
 * (sharp's and resvg's output) and slices of Node's shared Buffer pool are marked untransferable:
 * Node 20 copies them when they are listed, Node 21+ throws DataCloneError, so they are left out
 * of the list and copied by the structured clone instead.
 */
function movable(buffers: ArrayBuffer[]): ArrayBuffer[] {
  return untransferable ? buffers.filter((buffer) => !untransferable(buffer)) : buffers
}

/**
 * The body of a pool's worker: runs `handle` on each job and posts the result, its `transfer`
 * buffers moved rather than copied where they can be (`movable`). An error `refusal` recognises is the request's fault (its
 * `status` answered); any other is the worker's.
 */
export function serveJobs<Job, Result>(
  port: MessagePort,
  handle: (job: Job) => Promise<Result> | Result,
  options: { transfer(result: Result): ArrayBuffer[]; refusal(error: unknown): { status: number; message: string } | null },
) {
  port.on('message', async ({ job }: { job: Job }) => {
    try {
      const result = await handle(job)
      port.postMessage({ result }, movable(options.transfer(result)))
    } catch (error) {
      const refusal = options.refusal(error)
      // The code goes along: one that says a module failed to load retires the whole process (load-failure.ts).
      const code = (error as NodeJS.ErrnoException)?.code
      port.postMessage({ refusal, error: refusal ? undefined : String((error as Error)?.stack ?? error), code: typeof code === 'string' ? code : undefined })
    }
  })
}

export class WorkerPool<Job, Result> {
  private readonly slots: Array<Slot<Job, Result>> = []
  private readonly queue: Array<Pending<Job, Result>> = []
  private closed = false

  constructor(
    private readonly base: string,
    private readonly name: string,
    readonly options: PoolOptions,
    private readonly texts: PoolTexts,
  ) {}

  run(job: Job): Promise<Result> {
    if (this.closed) return Promise.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: this.texts.shuttingDown }))
    return new Promise((resolve, reject) => {
      const pending = { job, resolve, reject }
      const slot = this.freeSlot()
      if (slot) return this.start(slot, pending)
      if (this.queue.length >= this.options.queueLimit) return reject(this.texts.busy())
      this.queue.push(pending)
    })
  }

  /**
   * Starts every worker and has each run `job` (loading what the first real job would), so that no
   * request pays for start-up. Resolves when all are done, whether or not they succeeded: a worker
   * that failed is replaced on its next job as usual. Jobs that arrive meanwhile queue behind.
   */
  async warm(job: Job): Promise<void> {
    if (this.closed) return
    const warming: Array<Promise<unknown>> = []
    while (this.slots.length < this.options.size) {
      const slot = this.spawn()
      warming.push(new Promise((resolve) => this.start(slot, { job, resolve, reject: resolve })))
    }
    await Promise.all(warming)
  }

  get stats() {
    return { workers: this.slots.length, running: this.slots.filter((slot) => slot.busy).length, waiting: this.queue.length }
  }

  async close() {
    this.closed = true
    for (const pending of this.queue.splice(0)) pending.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: this.texts.shuttingDown }))
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()))
  }

  private freeSlot(): Slot<Job, Result> | null {
    const idle = this.slots.find((s) => !s.busy)
    if (idle) return idle
    if (this.slots.length < this.options.size) return this.spawn()
    return null
  }

  private spawn(): Slot<Job, Result> {
    const slot: Slot<Job, Result> = { worker: startWorker(this.base, this.name), busy: null }
    slot.worker.unref()
    slot.worker.on('message', (message: WorkerMessage<Result>) => {
      const pending = slot.busy
      if (!pending) return
      this.finish(slot)
      if (message.result) pending.resolve(message.result)
      else if (message.refusal) pending.reject(new TRPCError({ code: REFUSAL_CODES[message.refusal.status] ?? 'BAD_REQUEST', message: message.refusal.message }))
      else pending.reject(Object.assign(new Error(`${this.texts.worker} failed: ${message.error}`), message.code ? { code: message.code } : {}))
    })
    slot.worker.on('error', (error) => this.fail(slot, error))
    slot.worker.on('exit', (code) => this.fail(slot, new Error(`${this.texts.worker} worker exited with code ${code}`)))
    this.slots.push(slot)
    return slot
  }

  private start(slot: Slot<Job, Result>, pending: Pending<Job, Result>) {
    slot.busy = pending
    slot.timer = setTimeout(() => {
      this.fail(slot, new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: this.texts.overran(this.options.timeoutMs / 1000) }))
    }, this.options.timeoutMs)
    slot.worker.postMessage({ job: pending.job })
  }

  /** Frees a slot after a job and hands it the next waiting one. */
  private finish(slot: Slot<Job, Result>) {
    clearTimeout(slot.timer)
    slot.busy = null
    const next = this.queue.shift()
    if (next) this.start(slot, next)
  }

  /** A worker that failed, died or overran is dropped; its job fails and the queue moves on with a fresh worker. */
  private fail(slot: Slot<Job, Result>, error: unknown) {
    const index = this.slots.indexOf(slot)
    if (index < 0) return
    this.slots.splice(index, 1)
    clearTimeout(slot.timer)
    slot.worker.removeAllListeners()
    slot.worker.on('error', () => {})
    void slot.worker.terminate()
    slot.busy?.reject(error)
    slot.busy = null
    const next = this.queue.shift()
    if (next && !this.closed) this.start(this.spawn(), next)
  }
}
