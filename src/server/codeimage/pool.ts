/**
 * A small pool of render workers. Each job has a time budget: a worker that overruns it is
 * terminated (the only way to stop a busy thread) and replaced, and the job fails with 503.
 * Jobs past the queue's capacity are refused at once rather than piling up.
 */
import { Worker } from 'node:worker_threads'
import { TRPCError } from '@trpc/server'
import type { RenderJob, RenderResult } from './renderer.js'
import { WARM_UP_JOB } from './warm-up.js'

export interface PoolOptions {
  size: number
  timeoutMs: number
  /** Jobs that may wait for a free worker. */
  queueLimit: number
}

interface Pending {
  job: RenderJob
  resolve: (result: RenderResult) => void
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

export class RenderPool {
  private readonly slots: Slot[] = []
  private readonly queue: Pending[] = []
  private nextId = 0
  private closed = false

  constructor(private readonly options: PoolOptions) {}

  render(job: RenderJob): Promise<RenderResult> {
    if (this.closed) return Promise.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The renderer is shutting down' }))
    return new Promise((resolve, reject) => {
      const pending = { job, resolve, reject }
      const slot = this.freeSlot()
      if (slot) return this.run(slot, pending)
      if (this.queue.length >= this.options.queueLimit) {
        return reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Too many images are being rendered; try again shortly' }))
      }
      this.queue.push(pending)
    })
  }

  /**
   * Starts every worker and has each render WARM_UP_JOB (fonts, shiki, WASM, the glyph atlas),
   * so that no request pays for start-up (0.4-1.3 s). Resolves when all are warm; a worker that
   * fails to warm is replaced on its first job as usual. Jobs that arrive meanwhile queue behind.
   */
  async warm(): Promise<void> {
    if (this.closed) return
    const warming: Array<Promise<unknown>> = []
    while (this.slots.length < this.options.size) {
      const slot = this.spawn()
      warming.push(new Promise((resolve) => this.run(slot, { job: WARM_UP_JOB, resolve, reject: resolve })))
    }
    await Promise.all(warming)
  }

  async close() {
    this.closed = true
    for (const pending of this.queue.splice(0)) pending.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The renderer is shutting down' }))
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
    slot.worker.on('message', (message: { id: number; result?: RenderResult; refusal?: { status: number; message: string }; error?: string }) => {
      const pending = slot.busy
      if (!pending) return
      this.finish(slot)
      if (message.result) pending.resolve(message.result)
      else if (message.refusal) {
        pending.reject(new TRPCError({ code: message.refusal.status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', message: message.refusal.message }))
      } else pending.reject(new Error(`render failed: ${message.error}`))
    })
    slot.worker.on('error', (error) => this.fail(slot, error))
    slot.worker.on('exit', (code) => this.fail(slot, new Error(`render worker exited with code ${code}`)))
    this.slots.push(slot)
    return slot
  }

  private run(slot: Slot, pending: Pending) {
    slot.busy = pending
    slot.timer = setTimeout(() => {
      this.fail(slot, new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `Rendering took longer than ${this.options.timeoutMs / 1000} s; try a shorter snippet or a smaller scale` }))
    }, this.options.timeoutMs)
    slot.worker.postMessage({ id: this.nextId++, job: pending.job })
  }

  /** Frees a slot after a job and hands it the next waiting one. */
  private finish(slot: Slot) {
    clearTimeout(slot.timer)
    slot.busy = null
    const next = this.queue.shift()
    if (next) this.run(slot, next)
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
    if (next && !this.closed) this.run(this.spawn(), next)
  }
}
