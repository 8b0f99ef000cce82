/**
 * The one queue for image and video work (sharp, ffmpeg). Each sharp call holds a thread of
 * libuv's pool for its whole run, and that pool (4 threads unless UV_THREADPOOL_SIZE says
 * otherwise) also hashes passwords and reads files: a dozen concurrent uploads used to take every
 * thread, and a login waited 5 s. Jobs past the concurrency wait here, and past the queue's
 * capacity they are refused at once with 503 rather than piling up. libvips's worker threads
 * (where sharp's pixels are computed) and ffmpeg run at a lower priority than the threads that
 * answer requests (workers/priority.ts).
 */
import { availableParallelism } from 'node:os'
import { TRPCError } from '@trpc/server'
import { parsePositiveInt } from '../config.js'
import { lowerThreadsNamed } from '../workers/priority.js'

export interface MediaQueueOptions {
  /** Jobs that run at the same time. */
  concurrency: number
  /** Jobs that may wait for a free slot. */
  queueLimit: number
}

/** The queue is full: 503 with a `Retry-After`, as a job takes a second or two. */
export class BusyError extends TRPCError {
  readonly retryAfter = 2
  constructor() {
    super({ code: 'SERVICE_UNAVAILABLE', message: 'The server is busy processing other images and videos; try again shortly' })
  }
}

export class MediaQueue {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(readonly options: MediaQueueOptions) {}

  /** Runs `job` when a slot is free; rejects with 503 when the queue is full. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running < this.options.concurrency) this.running++
    else if (this.waiting.length >= this.options.queueLimit) {
      throw new BusyError()
    } else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      return await job()
    } finally {
      // libvips's workers, started by the shared thread pool at its priority, go below the social API's threads.
      lowerThreadsNamed('libvips worker')
      // The slot passes straight to the next waiting job, so `running` only drops when nobody waits.
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  get stats() {
    return { running: this.running, waiting: this.waiting.length }
  }
}


/**
 * The default concurrency: one job per core but one, and always two pool threads left for
 * password hashing and file reads. UV_THREADPOOL_SIZE only takes effect when set in the
 * environment that starts Node (an ESM entry point is itself read through the pool, so setting it
 * from bin/run.js is too late), hence it is read here rather than raised.
 */
export function defaultConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const poolSize = Number(env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.min(availableParallelism() - 1, poolSize - 2))
}

export function mediaQueueOptions(env: NodeJS.ProcessEnv): MediaQueueOptions {
  const concurrency = parsePositiveInt('PLAZA_MEDIA_CONCURRENCY', env.PLAZA_MEDIA_CONCURRENCY, defaultConcurrency(process.env))
  return { concurrency, queueLimit: parsePositiveInt('PLAZA_MEDIA_QUEUE', env.PLAZA_MEDIA_QUEUE, Math.max(32, concurrency * 16)) }
}

let shared: MediaQueue | undefined

/**
 * The process's media queue, configured from the first caller's environment
 * (`PLAZA_MEDIA_CONCURRENCY`, `PLAZA_MEDIA_QUEUE`): the thread pool it protects is per process too.
 */
export function mediaQueue(env: NodeJS.ProcessEnv): MediaQueue {
  return (shared ??= new MediaQueue(mediaQueueOptions(env)))
}
