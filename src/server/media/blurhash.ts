/**
 * BlurHash placeholders, computed once per stored image so that apps can show a blurred preview
 * before the image loads. sharp downscales the stored image on libuv's pool; the encoder
 * (blurhash-encode.ts) is plain JavaScript (about half a millisecond per image), so it runs on a
 * worker thread of its own rather than on the event loop. Callers hold a media queue slot meanwhile.
 */
import { Worker } from 'node:worker_threads'
import sharp from 'sharp'
import type { BlurhashRequest } from './blurhash-worker.js'

/** Longest side of the image the hash is computed from: a few cosine components need no more than 32 px. */
export const BLURHASH_SAMPLE_SIDE = 32

/**
 * Components along each axis: 4 along the longer side and 3 along the shorter (4 × 4 for a square),
 * so that each component covers about the same extent of the picture either way.
 */
export function blurhashComponents(width: number, height: number): { x: number; y: number } {
  if (width === height) return { x: 4, y: 4 }
  return width > height ? { x: 4, y: 3 } : { x: 3, y: 4 }
}

/** Starts blurhash-worker.ts; from the TypeScript sources (tests, tsx) it registers tsx inside the worker first. */
function startWorker(): Worker {
  const here = new URL(import.meta.url)
  if (here.pathname.endsWith('.ts')) {
    const target = new URL('./blurhash-worker.ts', here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { eval: true })
  }
  return new Worker(new URL('./blurhash-worker.js', here))
}

interface Pending {
  resolve: (hash: string) => void
  reject: (error: unknown) => void
}

/**
 * One worker thread, started on first use. It keeps the process alive only while it has work (an
 * embedded CLI upload must not exit before its hash arrives). One thread is enough: a hash takes
 * far less than the sharp work around it, whose parallelism the media queue already bounds. A
 * worker that dies fails its jobs; the next job starts a new one.
 */
class BlurhashEncoder {
  private worker: Worker | undefined
  private pending = new Map<number, Pending>()
  private nextId = 0

  encode(pixels: Uint8Array, width: number, height: number, componentsX: number, componentsY: number): Promise<string> {
    const worker = this.start()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.ref()
      worker.postMessage({ id, pixels, width, height, componentsX, componentsY } satisfies BlurhashRequest)
    })
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = startWorker()
    const pending = (this.pending = new Map())
    worker.on('message', ({ id, hash, error }: { id: number; hash?: string; error?: string }) => {
      const job = pending.get(id)
      if (!job) return
      pending.delete(id)
      if (pending.size === 0) worker.unref()
      if (hash !== undefined) job.resolve(hash)
      else job.reject(new Error(`BlurHash encoding failed: ${error}`))
    })
    const fail = (error: unknown) => {
      if (this.worker === worker) this.worker = undefined
      for (const job of pending.values()) job.reject(error)
      pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`BlurHash worker exited with code ${code}`)))
    worker.unref()
    return (this.worker = worker)
  }
}

const encoder = new BlurhashEncoder()

/**
 * The BlurHash of an encoded image (its first frame), computed from a copy at most
 * BLURHASH_SAMPLE_SIDE px on its longer side. Transparent areas are flattened onto white, as
 * BlurHash has no alpha and a transparent pixel's colour would otherwise show as black.
 */
export async function blurhashOf(image: Buffer): Promise<string> {
  const { data, info } = await sharp(image)
    .flatten({ background: '#ffffff' })
    .resize(BLURHASH_SAMPLE_SIDE, BLURHASH_SAMPLE_SIDE, { fit: 'inside', withoutEnlargement: true })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  const { x, y } = blurhashComponents(info.width, info.height)
  return encoder.encode(new Uint8Array(data), info.width, info.height, x, y)
}
