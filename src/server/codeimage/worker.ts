/** A render worker: builds its renderer (fonts, highlighter) once, then renders job after job. */
import { parentPort } from 'node:worker_threads'
import { Renderer, RenderRefusal, type RenderJob } from './renderer.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

const ready = Renderer.create()

port.on('message', async ({ id, job }: { id: number; job: RenderJob }) => {
  try {
    const result = await (await ready).render(job)
    port.postMessage({ id, result }, [result.data.buffer as ArrayBuffer])
  } catch (error) {
    const refusal = error instanceof RenderRefusal ? { status: error.status, message: error.message } : null
    port.postMessage({ id, refusal, error: refusal ? undefined : String((error as Error)?.stack ?? error) })
  }
})
