/**
 * SVG → PNG for the card renderers, and the bounded worker pool that keeps it off the event loop
 * (the shape of codeimage/pool.ts, for any job type): each job has a time budget, a worker that
 * overruns it is terminated and replaced and the job fails with 503, and jobs past the queue's
 * capacity are refused at once.
 */
import { Worker } from 'node:worker_threads'
import { Resvg } from '@resvg/resvg-js'
import { TRPCError } from '@trpc/server'

export interface RasterImage {
  data: Uint8Array
  width: number
  height: number
}

/** Renders an SVG document at its own size. No system fonts: every glyph is already a path. */
export function rasterize(svg: string): RasterImage {
  const image = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render()
  return { data: image.asPng(), width: image.width, height: image.height }
}

/** A failure the request caused, raised inside a worker; `status` is the HTTP status to answer with. */
export class RenderRefusal extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message)
  }
}

export interface PoolOptions {
  size: number
  timeoutMs: number
  /** Jobs that may wait for a free worker. */
  queueLimit: number
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

type WorkerMessage<Result> = { result?: Result; refusal?: { status: number; message: string }; error?: string }

const REFUSAL_CODES = { 400: 'BAD_REQUEST', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' } as const

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

/** The body of a pool's worker: runs `handle` on each job and posts the result (its bytes transferred). */
export function serveJobs<Job, Result extends { data: Uint8Array }>(port: import('node:worker_threads').MessagePort, handle: (job: Job) => Promise<Result> | Result) {
  port.on('message', async ({ job }: { job: Job }) => {
    try {
      const result = await handle(job)
      port.postMessage({ result }, [result.data.buffer as ArrayBuffer])
    } catch (error) {
      const refusal = error instanceof RenderRefusal ? { status: error.status, message: error.message } : null
      port.postMessage({ refusal, error: refusal ? undefined : String((error as Error)?.stack ?? error) })
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
    private readonly options: PoolOptions,
  ) {}

  run(job: Job): Promise<Result> {
    if (this.closed) return Promise.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The renderer is shutting down' }))
    return new Promise((resolve, reject) => {
      const pending = { job, resolve, reject }
      const slot = this.freeSlot()
      if (slot) return this.start(slot, pending)
      if (this.queue.length >= this.options.queueLimit) {
        return reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Too many images are being rendered; try again shortly' }))
      }
      this.queue.push(pending)
    })
  }

  async close() {
    this.closed = true
    for (const pending of this.queue.splice(0)) pending.reject(new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The renderer is shutting down' }))
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
      else if (message.refusal) {
        const code = REFUSAL_CODES[message.refusal.status as keyof typeof REFUSAL_CODES] ?? 'BAD_REQUEST'
        pending.reject(new TRPCError({ code, message: message.refusal.message }))
      } else pending.reject(new Error(`render failed: ${message.error}`))
    })
    slot.worker.on('error', (error) => this.fail(slot, error))
    slot.worker.on('exit', (code) => this.fail(slot, new Error(`render worker exited with code ${code}`)))
    this.slots.push(slot)
    return slot
  }

  private start(slot: Slot<Job, Result>, pending: Pending<Job, Result>) {
    slot.busy = pending
    slot.timer = setTimeout(() => {
      this.fail(slot, new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `Rendering took longer than ${this.options.timeoutMs / 1000} s` }))
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
