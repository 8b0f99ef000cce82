/** A render worker: builds its renderer (fonts, highlighter) once, then renders job after job. */
import { parentPort } from 'node:worker_threads'
import { serveJobs } from '../workers/pool.js'
import { Renderer, RenderRefusal, type RenderJob, type RenderResult } from './renderer.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

const ready = Renderer.create()

serveJobs<RenderJob, RenderResult>(port, async (job) => (await ready).render(job), {
  transfer: (result) => [result.data],
  refusal: (error) => (error instanceof RenderRefusal ? { status: error.status, message: error.message } : null),
})
