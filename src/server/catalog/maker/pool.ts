/**
 * The Maker's render pool, one per server (on `Services`) and started on the first card: layout
 * and rasterising run in worker threads, `PLAZA_MAKER_WORKERS` at a time (default: one per core
 * but one, at most 2), each job within `PLAZA_MAKER_TIMEOUT_MS` (default 10 s), and at most
 * `PLAZA_MAKER_QUEUE` (default 32) waiting. A serving process warms the pool on its first card
 * (every worker loads its fonts then, and stays loaded).
 */
import { availableParallelism } from 'node:os'
import { parsePositiveInt } from '../../config.js'
import type { RasterImage } from '../../render/rasterize.js'
import { WorkerPool, type JobTiming, type PoolOptions } from '../../workers/pool.js'
import { perProcess } from '../../workers/priority.js'
import type { CardJob } from './scene.js'

/** A pool of card workers (worker.ts), in the renderer's words. */
export function createMakerPool(options: PoolOptions): WorkerPool<CardJob, RasterImage> {
  return new WorkerPool<CardJob, RasterImage>(import.meta.url, 'worker', options, {
    shuttingDown: 'The renderer is shutting down',
    busy: 'Too many images are being rendered; try again shortly',
    overran: (seconds) => `Rendering took longer than ${seconds} s`,
    worker: 'render',
  })
}

export function makerPoolOptions(env: NodeJS.ProcessEnv, processes = 1): PoolOptions {
  return {
    size: parsePositiveInt('PLAZA_MAKER_WORKERS', env.PLAZA_MAKER_WORKERS, perProcess(Math.max(1, Math.min(2, availableParallelism() - 1)), processes)),
    timeoutMs: parsePositiveInt('PLAZA_MAKER_TIMEOUT_MS', env.PLAZA_MAKER_TIMEOUT_MS, 10_000),
    queueLimit: parsePositiveInt('PLAZA_MAKER_QUEUE', env.PLAZA_MAKER_QUEUE, 32),
  }
}

/** What warms a worker: a small logo loads the fonts and the rasteriser every card needs. */
const WARM_UP_CARD: CardJob = { kind: 'logo', input: { text: 'Plaza', style: 'badge', color: '#2563eb', size: 64 } }

export interface MakerService {
  /** Renders a card to PNG in the pool, with how long it waited and ran. */
  render(job: CardJob): Promise<{ data: Buffer; width: number; height: number; timing: JobTiming }>
  readonly stats: WorkerPool<CardJob, RasterImage>['stats']
  close(graceMs?: number): Promise<void>
}

/** `warm`: on the first card, start every worker (a serving process); off for a one-shot command. */
export function createMakerService(env: NodeJS.ProcessEnv, options: { warm?: boolean; processes?: number } = {}): MakerService {
  let pool: WorkerPool<CardJob, RasterImage> | undefined
  const poolOf = () => {
    if (pool) return pool
    pool = createMakerPool(makerPoolOptions(env, options.processes))
    if (options.warm) void pool.warm(WARM_UP_CARD)
    return pool
  }
  return {
    async render(job) {
      const { result: image, timing } = await poolOf().runTimed(job)
      return { data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), width: image.width, height: image.height, timing }
    },
    get stats() {
      return pool?.stats ?? { workers: 0, starting: 0, idle: 0, running: 0, waiting: 0 }
    },
    close: async (graceMs = 0) => {
      await pool?.close(graceMs)
    },
  }
}
