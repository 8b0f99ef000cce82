/**
 * The bounded worker pool behind every CPU-heavy job type (code images, speech, the Maker's cards,
 * the JavaScript sandbox): jobs run in worker threads, at most `size` at a time, at a lower CPU
 * priority than the threads that serve the social API; each job has a time budget, and a worker
 * that overruns it is terminated (the only way to stop a busy thread) and replaced, the job failing
 * with 503. Jobs past the queue's capacity are refused at once (503 with Retry-After).
 *
 * Every job is answered, whatever happens to it: a job that cannot be posted, that throws, that a
 * worker dies running or that overruns frees its place (or its worker is replaced), and the jobs
 * queued behind it run. A worker starts in the background and takes jobs only once it is ready
 * (loaded, and through the warm-up job when there is one); once warmed (a server warms its pools on
 * their first use, or at start), a pool keeps all its workers ready, replacing one that ends at
 * once rather than at the next job. A job reports how long it queued behind others and how long it
 * waited for a worker to start.
 */
import { EventEmitter } from 'node:events'
import * as threads from 'node:worker_threads'
import { Worker, type MessagePort, type ResourceLimits } from 'node:worker_threads'
import { TRPCError } from '@trpc/server'
import type { ErrorCases } from '../errors.js'
import { isModuleLoadError } from '../load-failure.js'
import { lowerThreadPriority, WORKER_NICE } from './priority.js'

/** What a job of any pool can answer: refused while the queue is full, or past its time budget (ErrorCases in errors.ts). */
export const POOL_ERRORS: ErrorCases = {
  503: 'The server is busy with other jobs of this kind, or this one took longer than its time budget; try again shortly',
}

export { WORKER_NICE } from './priority.js'

export interface PoolOptions {
  size: number
  timeoutMs: number
  /** Jobs that may wait for a free worker. */
  queueLimit: number
  /** How long a new worker may take to load (and run the warm-up job) before it is given up on; default 60 s. */
  startTimeoutMs?: number
  /** The worker threads' nice value (19 lowest priority); default WORKER_NICE. */
  nice?: number
  /** Handed to every worker (`workerData`), beside the pool's own fields. */
  workerData?: Record<string, unknown>
  resourceLimits?: ResourceLimits
  /** The timers behind the time budgets (tests pass their own, to overrun a job without waiting). */
  timers?: PoolTimers
}

export interface PoolTimers {
  set(callback: () => void, ms: number): unknown
  clear(handle: unknown): void
}

const REAL_TIMERS: PoolTimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

/** What a pool says to its callers, in the words of its job type. */
export interface PoolTexts {
  /** The failure of a pool that is closing. */
  shuttingDown: string
  /** The 503's message for a job refused because the queue is full. */
  busy: string
  /** The 503's message for a job past its time budget. */
  overran(seconds: number): string
  /** Names the workers in internal errors and logs: `render`, `speech`. */
  worker: string
}

/** How long a job waited before it ran, and how long it ran. */
export interface JobTiming {
  /** Waiting for a worker other jobs held. */
  queueMs: number
  /** Waiting for a worker to start (load its module, warm up). */
  startMs: number
  /** The job itself, in the worker. */
  runMs: number
}

/** The queue is full: 503 with a `Retry-After`, as a job takes a second or two. */
export class PoolBusyError extends TRPCError {
  constructor(
    message: string,
    readonly retryAfter = 2,
  ) {
    super({ code: 'SERVICE_UNAVAILABLE', message })
  }
}

/** A job past its time budget: its worker was terminated (and is replaced). */
export class JobOverranError extends TRPCError {
  constructor(message: string) {
    super({ code: 'SERVICE_UNAVAILABLE', message })
  }
}

/** A job whose worker failed under it (crashed, exited) or that failed inside it without a refusal: a 500, the detail for the log. */
export class WorkerFailedError extends Error {}

interface Pending<Job, Result> {
  job: Job
  resolve: (value: { result: Result; timing: JobTiming }) => void
  reject: (error: unknown) => void
  submitted: number
  /** A warm-up job: its outcome only readies the worker. */
  warmUp?: boolean
}

interface Slot<Job, Result> {
  worker: Worker
  state: 'starting' | 'warming' | 'idle' | 'busy'
  spawned: number
  ready?: number
  pending: Pending<Job, Result> | null
  dispatched: number
  timer?: unknown
}

type WorkerMessage<Result> = { ready?: true; result?: Result; refusal?: { status: number; message: string }; error?: string; code?: string }

const REFUSAL_CODES: Record<number, TRPCError['code']> = { 400: 'BAD_REQUEST', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 503: 'SERVICE_UNAVAILABLE' }

/** Consecutive start failures after which queued jobs are refused rather than left waiting for a worker that cannot start. */
const START_FAILURES_TO_GIVE_UP = 3
const MAX_RESPAWN_DELAY_MS = 30_000

/**
 * Starts the worker module `name` next to `base` (an `import.meta.url`); from the TypeScript
 * sources (tests, tsx) it registers tsx inside the worker first.
 */
function startWorker(base: string, name: string, options: threads.WorkerOptions): Worker {
  const here = new URL(base)
  if (here.pathname.endsWith('.ts')) {
    const target = new URL(`./${name}.ts`, here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { ...options, eval: true })
  }
  return new Worker(new URL(`./${name}.js`, here), options)
}

const isDetachable = (buffer: ArrayBufferLike): buffer is ArrayBuffer =>
  buffer instanceof ArrayBuffer && !(threads as { isMarkedAsUntransferable?: (value: object) => boolean }).isMarkedAsUntransferable?.(buffer)

/**
 * Posts `message`, moving the memory of `views` that own their whole ArrayBuffer rather than
 * copying it. A view into a shared or pooled buffer (a small Buffer lives in a pool Node 24 refuses
 * to transfer) is copied; and if the runtime refuses a transfer anyway, the message goes as a copy.
 */
export function postWithTransfer(port: { postMessage(value: unknown, transfer?: ArrayBuffer[]): void }, message: unknown, views: ArrayBufferView[]): void {
  const transfer = [...new Set(views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && isDetachable(v.buffer)).map((v) => v.buffer as ArrayBuffer))]
  try {
    port.postMessage(message, transfer)
  } catch (error) {
    if (transfer.length === 0 || (error as Error)?.name !== 'DataCloneError') throw error
    port.postMessage(message)
  }
}

/**
 * The body of a pool's worker: lowers its thread's priority, waits for `ready` (what it loads
 * before its first job), says so, then runs `handle` on each job and posts the result, the memory
 * of its `transfer` views moved rather than copied where it can be. An error `refusal` recognises
 * is the request's fault (its `status` answered); any other is the worker's.
 */
export function serveJobs<Job, Result>(
  port: MessagePort,
  handle: (job: Job) => Promise<Result> | Result,
  options: { transfer(result: Result): ArrayBufferView[]; refusal(error: unknown): { status: number; message: string } | null; ready?: Promise<unknown> },
) {
  const nice = (threads.workerData as { plazaNice?: unknown } | null)?.plazaNice
  if (typeof nice === 'number') lowerThreadPriority(nice)
  port.on('message', async ({ job }: { job: Job }) => {
    try {
      const result = await handle(job)
      postWithTransfer(port, { result }, options.transfer(result))
    } catch (error) {
      const refusal = options.refusal(error)
      // The code goes along: one that says a module failed to load retires the whole process (load-failure.ts).
      const code = (error as NodeJS.ErrnoException)?.code
      try {
        port.postMessage({ refusal, error: refusal ? undefined : String((error as Error)?.stack ?? error), code: typeof code === 'string' ? code : undefined })
      } catch {
        port.postMessage({ error: 'the result could not be sent' })
      }
    }
  })
  // A module that fails to load never gets here: the worker ends with an error, and the pool replaces it.
  void Promise.resolve(options.ready).then(
    () => port.postMessage({ ready: true }),
    (error) => {
      throw error
    },
  )
}

export class WorkerPool<Job, Result> extends EventEmitter {
  private readonly slots: Array<Slot<Job, Result>> = []
  private readonly queue: Array<Pending<Job, Result>> = []
  private readonly startTimeoutMs: number
  private readonly timers: PoolTimers
  /** Set by warm(): from then on the pool keeps `size` workers ready; before, workers start as jobs need them. */
  private keepWarm = false
  private warmJob: Job | undefined
  private closed = false
  private startFailures = 0
  private respawn: NodeJS.Timeout | undefined
  private retryDue = false
  private drained: (() => void) | null = null

  constructor(
    private readonly base: string,
    private readonly name: string,
    readonly options: PoolOptions,
    private readonly texts: PoolTexts,
  ) {
    super()
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000
    this.timers = options.timers ?? REAL_TIMERS
  }

  /** Runs `job` on a ready worker: its result, or the error it was refused or failed with. */
  async run(job: Job): Promise<Result> {
    return (await this.runTimed(job)).result
  }

  /** As run(), with how long the job waited and ran. */
  runTimed(job: Job): Promise<{ result: Result; timing: JobTiming }> {
    if (this.closed) return Promise.reject(this.shuttingDown())
    // Room for `size` jobs running (or waiting for the workers that will run them to start) and `queueLimit` more.
    const running = this.slots.filter((slot) => slot.state === 'busy').length
    if (running + this.queue.length >= this.options.size + this.options.queueLimit) return Promise.reject(new PoolBusyError(this.texts.busy))
    return new Promise((resolve, reject) => {
      const now = performance.now()
      this.queue.push({ job, resolve, reject, submitted: now })
      this.pump(now)
    })
  }

  /**
   * Starts every worker and has each run `job` (loading what the first real job would) before it
   * takes jobs, now and for every worker that replaces one later, so that no request pays for
   * start-up. Resolves once every worker is ready or has failed to start.
   */
  async warm(job: Job): Promise<void> {
    if (this.closed) return
    this.warmJob = job
    this.keepWarm = true
    this.pump()
    await new Promise<void>((resolve) => {
      const check = () => {
        if (this.closed || !this.slots.some((slot) => slot.state === 'starting' || slot.state === 'warming')) {
          this.off('settled', check)
          resolve()
        }
      }
      this.on('settled', check)
      check()
    })
  }

  get stats() {
    const count = (state: Slot<Job, Result>['state']) => this.slots.filter((slot) => slot.state === state).length
    return { workers: this.slots.length, starting: count('starting') + count('warming'), idle: count('idle'), running: count('busy'), waiting: this.queue.length }
  }

  /**
   * Stops the pool: no new job is taken; queued and running jobs have `graceMs` to finish, then
   * every worker is terminated and what is left is answered 503. Resolves when all workers are gone.
   */
  async close(graceMs = 0): Promise<void> {
    if (!this.closed) {
      this.closed = true
      clearTimeout(this.respawn)
      if (graceMs > 0 && (this.queue.length > 0 || this.slots.some((slot) => slot.state === 'busy'))) {
        // Workers still starting may take queued jobs meanwhile; none is started any more.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs)
          this.drained = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        this.drained = null
      }
    }
    for (const pending of this.queue.splice(0)) pending.reject(this.shuttingDown())
    const workers = this.slots.map((slot) => slot.worker)
    for (const slot of [...this.slots]) this.drop(slot, this.shuttingDown())
    // A warm() still waiting for its workers is over too.
    this.emit('settled')
    await Promise.all(workers.map((worker) => worker.terminate().catch(() => {})))
  }

  private shuttingDown() {
    return new PoolBusyError(this.texts.shuttingDown, 1)
  }

  /**
   * Hands queued jobs to idle workers, and starts the workers the pool is short of. `now`: the
   * moment of the event that called it (one clock reading per turn), so that a job dispatched or a
   * worker started in that turn is timed from the same instant.
   */
  private pump(now = performance.now()) {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.state === 'idle')
      if (!slot) break
      this.dispatch(slot, this.queue.shift()!, now)
    }
    if (this.closed) {
      if (this.queue.length === 0 && !this.slots.some((slot) => slot.state === 'busy')) this.drained?.()
      return
    }
    // Warm: every worker, always. Otherwise one for each queued job no starting worker will take.
    const starting = this.slots.filter((slot) => slot.state === 'starting' || slot.state === 'warming').length
    const wanted = this.keepWarm ? this.options.size : Math.min(this.options.size, this.slots.length + Math.max(0, this.queue.length - starting))
    if (this.slots.length >= wanted || this.respawn) return
    // After failed starts, the next try waits a little longer each time (the module may be missing for good).
    const delay = this.startFailures < 2 || this.retryDue ? 0 : Math.min(MAX_RESPAWN_DELAY_MS, 250 * 2 ** (this.startFailures - 2))
    this.retryDue = false
    if (delay === 0) {
      while (this.slots.length < wanted) this.spawn(now)
      return
    }
    this.respawn = setTimeout(() => {
      this.respawn = undefined
      this.retryDue = true
      this.pump()
    }, delay)
    // Only jobs waiting for a worker keep the process alive for it.
    if (this.queue.length === 0) this.respawn.unref()
  }

  private spawn(now = performance.now()): Slot<Job, Result> {
    const worker = startWorker(this.base, this.name, {
      workerData: { ...this.options.workerData, plazaNice: this.options.nice ?? WORKER_NICE },
      resourceLimits: this.options.resourceLimits,
    })
    // Timed from the turn that asked for it: constructing the Worker itself is part of its start.
    const slot: Slot<Job, Result> = { worker, state: 'starting', spawned: now, pending: null, dispatched: 0 }
    worker.unref()
    slot.timer = this.timers.set(() => this.lose(slot, new Error(`${this.texts.worker} worker did not start within ${this.startTimeoutMs / 1000} s`)), this.startTimeoutMs)
    worker.on('message', (message: WorkerMessage<Result>) => this.receive(slot, message))
    worker.on('messageerror', (error) => this.lose(slot, error))
    worker.on('error', (error) => this.lose(slot, error))
    worker.on('exit', (code) => this.lose(slot, new Error(`${this.texts.worker} worker exited with code ${code}`)))
    this.slots.push(slot)
    return slot
  }

  private receive(slot: Slot<Job, Result>, message: WorkerMessage<Result>) {
    if (message.ready) {
      if (slot.state !== 'starting') return
      if (this.warmJob !== undefined && !this.closed) {
        slot.state = 'warming'
        const warmUp: Pending<Job, Result> = { job: this.warmJob, resolve: () => {}, reject: () => {}, submitted: performance.now(), warmUp: true }
        this.dispatch(slot, warmUp)
        return
      }
      this.becomeReady(slot)
      return
    }
    const pending = slot.pending
    if (!pending) return
    this.timers.clear(slot.timer)
    slot.pending = null
    const runMs = performance.now() - slot.dispatched
    if (pending.warmUp) {
      this.becomeReady(slot)
      return
    }
    slot.state = 'idle'
    if (message.result !== undefined) pending.resolve({ result: message.result, timing: this.timingOf(slot, pending, runMs) })
    else if (message.refusal) pending.reject(new TRPCError({ code: REFUSAL_CODES[message.refusal.status] ?? 'BAD_REQUEST', message: message.refusal.message }))
    else pending.reject(Object.assign(new WorkerFailedError(`${this.texts.worker} failed: ${message.error}`), message.code ? { code: message.code } : {}))
    this.pump()
  }

  private becomeReady(slot: Slot<Job, Result>) {
    this.timers.clear(slot.timer)
    slot.state = 'idle'
    // The jobs it takes now are dispatched at this same moment: their whole wait was its start.
    slot.ready = performance.now()
    this.startFailures = 0
    this.emit('ready')
    this.emit('settled')
    this.pump(slot.ready)
  }

  /**
   * The wait before a job ran, split in two: the time after its worker became ready is queueing
   * behind other jobs; before that, if the worker was started after the job arrived (or was still
   * starting), it is the start.
   */
  private timingOf(slot: Slot<Job, Result>, pending: Pending<Job, Result>, runMs: number): JobTiming {
    const waited = slot.dispatched - pending.submitted
    const startMs = Math.max(0, Math.min(waited, (slot.ready ?? slot.dispatched) - Math.max(pending.submitted, slot.spawned)))
    return { queueMs: Math.round(waited - startMs), startMs: Math.round(startMs), runMs: Math.round(runMs) }
  }

  private dispatch(slot: Slot<Job, Result>, pending: Pending<Job, Result>, now = performance.now()) {
    if (!pending.warmUp) slot.state = 'busy'
    slot.pending = pending
    slot.dispatched = now
    this.timers.clear(slot.timer)
    const budget = pending.warmUp ? this.startTimeoutMs : this.options.timeoutMs
    slot.timer = this.timers.set(() => {
      if (pending.warmUp) return this.lose(slot, new Error(`${this.texts.worker} worker did not warm up within ${budget / 1000} s`))
      this.drop(slot, new JobOverranError(this.texts.overran(budget / 1000)))
      this.pump()
    }, budget)
    try {
      slot.worker.postMessage({ job: pending.job })
    } catch (error) {
      // The job cannot be sent (something in it that cannot be cloned): it fails, the worker never saw it.
      this.timers.clear(slot.timer)
      slot.pending = null
      slot.state = pending.warmUp ? 'starting' : 'idle'
      pending.reject(new WorkerFailedError(`${this.texts.worker} job could not be sent to its worker: ${(error as Error)?.message ?? error}`))
      if (pending.warmUp) this.becomeReady(slot)
      else queueMicrotask(() => this.pump())
    }
  }

  /** A worker that failed, died or never started: its job (if any) fails, and the pool replaces it. */
  private lose(slot: Slot<Job, Result>, error: unknown) {
    if (!this.slots.includes(slot)) return
    const starting = slot.state === 'starting' || slot.state === 'warming'
    const pending = slot.pending && !slot.pending.warmUp ? slot.pending : null
    this.drop(slot, pending ? new WorkerFailedError(`${this.texts.worker} worker failed: ${(error as Error)?.message ?? error}`, { cause: error }) : error)
    if (starting) {
      this.startFailures++
      this.emit('start-failed', error)
      // A module that cannot be loaded will not load on a retry in this process (load-failure.ts retires it): the waiting jobs fail with that.
      if (isModuleLoadError(error)) {
        for (const queued of this.queue.splice(0)) queued.reject(new WorkerFailedError(`${this.texts.worker} worker could not load: ${(error as Error)?.message ?? error}`, { cause: error }))
      }
      // Jobs waiting for a worker that keeps failing to start are answered now rather than after every retry.
      else if (this.startFailures >= START_FAILURES_TO_GIVE_UP && !this.slots.some((s) => s.state === 'idle' || s.state === 'busy')) {
        for (const queued of this.queue.splice(0)) queued.reject(new PoolBusyError(`The ${this.texts.worker} workers cannot start; try again later`, 30))
      }
      this.emit('settled')
    }
    this.pump()
  }

  /** Removes a slot and terminates its worker; its job, if it had one, fails with `error`. */
  private drop(slot: Slot<Job, Result>, error: unknown) {
    const index = this.slots.indexOf(slot)
    if (index < 0) return
    this.slots.splice(index, 1)
    this.timers.clear(slot.timer)
    slot.worker.removeAllListeners()
    slot.worker.on('error', () => {})
    void slot.worker.terminate().catch(() => {})
    const pending = slot.pending
    slot.pending = null
    if (pending && !pending.warmUp) pending.reject(error)
    this.emit('replaced')
  }
}

/** A job's waits and run as a `Server-Timing` header (W3C): `queue;dur=12, start;dur=0, run;dur=340`. */
export function serverTiming(timing: JobTiming): string {
  return `queue;dur=${timing.queueMs}, start;dur=${timing.startMs}, run;dur=${timing.runMs}`
}
