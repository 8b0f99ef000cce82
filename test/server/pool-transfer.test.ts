/**
 * The worker pool moves a result's buffers to the main thread where it can and copies the rest:
 * buffers made by native modules (sharp, resvg) and slices of Node's Buffer pool cannot be moved,
 * and listing them made Node 21+ throw DataCloneError, so every code image and card was a 500 on
 * Node 24. Run on both Node 20 and Node 24 (.ci/run).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import sharp from 'sharp'
import { WorkerPool } from '../../src/server/workers/pool.js'
import type { TransferJob } from './pool-transfer-worker.js'

const pool = new WorkerPool<TransferJob, { data: Uint8Array }>(import.meta.url, 'pool-transfer-worker', { size: 1, timeoutMs: 60_000, queueLimit: 10 }, {
  shuttingDown: 'closing',
  busy: 'busy',
  overran: (seconds) => `over ${seconds} s`,
  worker: 'transfer',
})

test.after(() => pool.close())

test('a native module\'s buffer (sharp) arrives whole', async () => {
  const { data } = await pool.run('native')
  const meta = await sharp(data).metadata()
  assert.equal([meta.format, meta.width, meta.height], ['png', 3, 2])
})

test('a slice of the Buffer pool arrives with its bytes only', async () => {
  const { data } = await pool.run('pooled')
  assert.is(Buffer.from(data).toString(), 'pooled bytes')
})

test('a buffer of its own is moved and arrives whole', async () => {
  const { data } = await pool.run('own')
  assert.equal([...data], [1, 2, 3, 4])
})

test.run()
