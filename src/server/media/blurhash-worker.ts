/** The BlurHash encoder's thread: the encoder is JavaScript, so it stays off the event loop (blurhash.ts). */
import { parentPort } from 'node:worker_threads'
import { encodeBlurhash } from './blurhash-encode.js'

const port = parentPort
if (!port) throw new Error('blurhash-worker.ts runs as a worker thread')

export interface BlurhashRequest {
  id: number
  pixels: Uint8Array
  width: number
  height: number
  componentsX: number
  componentsY: number
}

port.on('message', ({ id, pixels, width, height, componentsX, componentsY }: BlurhashRequest) => {
  try {
    const hash = encodeBlurhash(pixels, width, height, componentsX, componentsY)
    port.postMessage({ id, hash })
  } catch (error) {
    port.postMessage({ id, error: String((error as Error)?.message ?? error) })
  }
})
