/** A Maker render worker: builds the card's SVG (text layout, template, pictures) and rasterises it, job after job. */
import { parentPort } from 'node:worker_threads'
import { rasterize, RenderRefusal, type RasterImage } from '../../render/rasterize.js'
import { serveJobs } from '../../workers/pool.js'
import { renderCard, type CardJob } from './scene.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

serveJobs<CardJob, RasterImage>(port, async (job) => rasterize(await renderCard(job)), {
  transfer: (result) => [result.data],
  refusal: (error) => (error instanceof RenderRefusal ? { status: error.status, message: error.message } : null),
})
