/**
 * The Maker's render pool, one per process and started on the first card: layout and rasterising
 * run in worker threads, `PLAZA_MAKER_WORKERS` at a time (default: one per core but one, at most
 * 2), each job within `PLAZA_MAKER_TIMEOUT_MS` (default 10 s), and at most `PLAZA_MAKER_QUEUE`
 * (default 32) waiting.
 */
import { availableParallelism } from 'node:os'
import { parsePositiveInt } from '../../config.js'
import { TRPCError } from '@trpc/server'
import type { RasterImage } from '../../render/rasterize.js'
import { WorkerPool, type PoolOptions } from '../../workers/pool.js'
import type { CardJob } from './scene.js'

let shared: WorkerPool<CardJob, RasterImage> | undefined

/** A pool of card workers (worker.ts), in the renderer's words. */
export function createMakerPool(options: PoolOptions): WorkerPool<CardJob, RasterImage> {
  return new WorkerPool<CardJob, RasterImage>(import.meta.url, 'worker', options, {
    shuttingDown: 'The renderer is shutting down',
    busy: () => new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Too many images are being rendered; try again shortly' }),
    overran: (seconds) => `Rendering took longer than ${seconds} s`,
    worker: 'render',
  })
}

export function makerPool(env: NodeJS.ProcessEnv): WorkerPool<CardJob, RasterImage> {
  return (shared ??= createMakerPool({
    size: parsePositiveInt('PLAZA_MAKER_WORKERS', env.PLAZA_MAKER_WORKERS, Math.max(1, Math.min(2, availableParallelism() - 1))),
    timeoutMs: parsePositiveInt('PLAZA_MAKER_TIMEOUT_MS', env.PLAZA_MAKER_TIMEOUT_MS, 10_000),
    queueLimit: parsePositiveInt('PLAZA_MAKER_QUEUE', env.PLAZA_MAKER_QUEUE, 32),
  }))
}

/** Renders a card to PNG in the pool. */
export async function renderCardPng(env: NodeJS.ProcessEnv, job: CardJob): Promise<{ data: Buffer; width: number; height: number }> {
  const image = await makerPool(env).run(job)
  return { data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), width: image.width, height: image.height }
}
