/** The BlurHash encoder's thread: its DCT runs in JavaScript, so it stays off the event loop (blurhash.ts). */
import { parentPort } from 'node:worker_threads'
import { encode } from 'blurhash'

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
    const hash = encode(new Uint8ClampedArray(pixels.buffer, pixels.byteOffset, pixels.byteLength), width, height, componentsX, componentsY)
    port.postMessage({ id, hash })
  } catch (error) {
    port.postMessage({ id, error: String((error as Error)?.message ?? error) })
  }
})
