/** The worker of pool-transfer.test.ts: answers each job with a buffer of the kind it names. */
import { parentPort } from 'node:worker_threads'
import sharp from 'sharp'
import { serveJobs } from '../../src/server/workers/pool.js'

const port = parentPort
if (!port) throw new Error('pool-transfer-worker.ts runs as a worker thread')

export type TransferJob = 'native' | 'pooled' | 'own'

async function make(kind: TransferJob): Promise<Uint8Array> {
  // sharp's output is a native module's buffer; Buffer.from of a short string is a slice of Node's shared pool.
  if (kind === 'native') return sharp({ create: { width: 3, height: 2, channels: 3, background: '#ff0000' } }).png().toBuffer()
  if (kind === 'pooled') return Buffer.from('pooled bytes')
  return new Uint8Array([1, 2, 3, 4])
}

serveJobs<TransferJob, { data: Uint8Array }>(port, async (kind) => ({ data: await make(kind) }), {
  transfer: (result) => [result.data],
  refusal: () => null,
})
