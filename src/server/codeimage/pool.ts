/** The code-image render workers (worker.ts): the shared bounded pool (workers/pool.ts) in the renderer's words. */
import { WorkerPool, type PoolOptions } from '../workers/pool.js'
import type { RenderJob, RenderResult } from './renderer.js'

export type RenderPool = WorkerPool<RenderJob, RenderResult>

export function createRenderPool(options: PoolOptions): RenderPool {
  return new WorkerPool<RenderJob, RenderResult>(import.meta.url, 'worker', options, {
    shuttingDown: 'The renderer is shutting down',
    busy: 'Too many images are being rendered; try again shortly',
    overran: (seconds) => `Rendering took longer than ${seconds} s; try a shorter snippet or a smaller scale`,
    worker: 'render',
  })
}
