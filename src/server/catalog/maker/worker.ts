/** A Maker render worker: builds the card's SVG (text layout, template, pictures) and rasterises it, job after job. */
import { parentPort } from 'node:worker_threads'
import { rasterize, serveJobs, type RasterImage } from '../../render/rasterize.js'
import { renderCard, type CardJob } from './scene.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

serveJobs<CardJob, RasterImage>(port, async (job) => rasterize(await renderCard(job)))
