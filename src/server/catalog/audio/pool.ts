/**
 * The speech workers: a small pool in the shape of codeimage/pool.ts. Synthesis (WebAssembly) and
 * MP3 encoding are CPU-bound for up to seconds, so they run in worker threads; a job that overruns
 * its time budget has its worker terminated and replaced. Past the queue's bound, a job is refused
 * at once with 503 and `Retry-After` rather than piling up.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { TRPCError } from '@trpc/server'
import { parsePositiveInt } from '../../config.js'
import type { EspeakVoice, SpeechFormat } from '../../../shared/schemas/speech.js'
import type { SpeechJob } from './engines.js'
import type { EncodedAudio } from './pcm.js'

export interface SpeechTask {
  job: SpeechJob
  format?: SpeechFormat
}

export interface SpeechTaskResult {
  audio?: EncodedAudio
  voices?: Array<EspeakVoice & { languages: Array<{ name: string; priority: number }> }>
}

export interface SpeechPoolOptions {
  /** Workers, i.e. jobs that run at the same time (PLAZA_SPEECH_CONCURRENCY). */
  size: number
  /** Jobs that may wait for a free worker (PLAZA_SPEECH_QUEUE). */
  queueLimit: number
  timeoutMs: number
}

/** The queue is full: 503 with a `Retry-After`, as a job takes a second or two. */
export class SpeechBusyError extends TRPCError {
  readonly retryAfter = 2
  constructor() {
    super({ code: 'SERVICE_UNAVAILABLE', message: 'The server is busy synthesising other speech; try again shortly' })
  }
}

/** One or two workers (one per core but one): each holds a compiled engine of 20-100 MB. */
export function speechPoolOptions(env: NodeJS.ProcessEnv): SpeechPoolOptions {
  const size = parsePositiveInt('PLAZA_SPEECH_CONCURRENCY', env.PLAZA_SPEECH_CONCURRENCY, Math.max(1, Math.min(2, availableParallelism() - 1)))
  return { size, queueLimit: parsePositiveInt('PLAZA_SPEECH_QUEUE', env.PLAZA_SPEECH_QUEUE, size * 8), timeoutMs: 60_000 }
}

interface Pending {
  task: SpeechTask
  resolve: (result: SpeechTaskResult) => void
  reject: (error: unknown) => void
}

interface Slot {
  worker: Worker
  busy: Pending | null
  timer?: NodeJS.Timeout
}

/** Starts worker.ts; from the TypeScript sources (tests, tsx) it registers tsx inside the worker first. */
function startWorker(): Worker {
  const here = new URL(import.meta.url)
  if (here.pathname.endsWith('.ts')) {
    const target = new URL('./worker.ts', here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { eval: true })
  }
  return new Worker(new URL('./worker.js', here))
}

const refusalCodes: Record<number, TRPCError['code']> = { 400: 'BAD_REQUEST', 413: 'PAYLOAD_TOO_LARGE', 503: 'SERVICE_UNAVAILABLE' }

export class SpeechPool {
  private readonly slots: Slot[] = []
  private readonly queue: Pending[] = []
  private nextId = 0
  private closed = false

  constructor(readonly options: SpeechPoolOptions) {}

  run(task: SpeechTask): Promise<SpeechTaskResult> {
    if (this.closed) return Promise.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Speech is shutting down' }))
    return new Promise((resolve, reject) => {
      const pending = { task, resolve, reject }
      const slot = this.freeSlot()
      if (slot) return this.start(slot, pending)
      if (this.queue.length >= this.options.queueLimit) return reject(new SpeechBusyError())
      this.queue.push(pending)
    })
  }

  get stats() {
    return { workers: this.slots.length, running: this.slots.filter((slot) => slot.busy).length, waiting: this.queue.length }
  }

  async close() {
    this.closed = true
    for (const pending of this.queue.splice(0)) pending.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Speech is shutting down' }))
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()))
  }

  private freeSlot(): Slot | null {
    const idle = this.slots.find((s) => !s.busy)
    if (idle) return idle
    if (this.slots.length < this.options.size) return this.spawn()
    return null
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startWorker(), busy: null }
    slot.worker.unref()
    slot.worker.on('message', (message: { id: number; result?: SpeechTaskResult; refusal?: { status: number; message: string }; error?: string }) => {
      const pending = slot.busy
      if (!pending) return
      this.finish(slot)
      if (message.result) pending.resolve(message.result)
      else if (message.refusal) pending.reject(new TRPCError({ code: refusalCodes[message.refusal.status] ?? 'BAD_REQUEST', message: message.refusal.message }))
      else pending.reject(new Error(`speech failed: ${message.error}`))
    })
    slot.worker.on('error', (error) => this.fail(slot, error))
    slot.worker.on('exit', (code) => this.fail(slot, new Error(`speech worker exited with code ${code}`)))
    this.slots.push(slot)
    return slot
  }

  private start(slot: Slot, pending: Pending) {
    slot.busy = pending
    slot.timer = setTimeout(() => {
      this.fail(slot, new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `Speech took longer than ${this.options.timeoutMs / 1000} s; try a shorter text` }))
    }, this.options.timeoutMs)
    slot.worker.postMessage({ id: this.nextId++, task: pending.task })
  }

  /** Frees a slot after a job and hands it the next waiting one. */
  private finish(slot: Slot) {
    clearTimeout(slot.timer)
    slot.busy = null
    const next = this.queue.shift()
    if (next) this.start(slot, next)
  }

  /** A worker that failed, died or overran is dropped; its job fails and the queue moves on with a fresh worker. */
  private fail(slot: Slot, error: unknown) {
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
