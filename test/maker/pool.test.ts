/** The Maker's worker pool: renders off the main thread; a job over its time budget is a 503 and the pool recovers; a full queue refuses at once. */
import { TRPCError } from '@trpc/server'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CardJob } from '../../src/server/catalog/maker/scene.js'
import { createMakerPool } from '../../src/server/catalog/maker/pool.js'

const logo: CardJob = { kind: 'logo', input: { text: 'Pool', style: 'badge', color: '#ff0000', size: 128 } }

test('a card rendered in a worker is the PNG the renderer draws', async () => {
  const pool = createMakerPool({ size: 1, timeoutMs: 30_000, queueLimit: 4 })
  try {
    const [a, b] = await Promise.all([pool.run(logo), pool.run({ kind: 'svg', svg: '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="20"><rect width="10" height="20" fill="#00ff00"/></svg>' })])
    assert.is(a.height, 128)
    const { data } = await sharp(Buffer.from(b.data)).raw().toBuffer({ resolveWithObject: true })
    assert.equal([...data.subarray(0, 3)], [0, 255, 0])
  } finally {
    await pool.close()
  }
})

test('over the time budget: 503, the worker replaced; past the queue: 503 at once', async () => {
  // 1 ms is less than any card takes (the budget starts when the worker, loaded, takes the job): the job overruns.
  const strict = createMakerPool({ size: 1, timeoutMs: 1, queueLimit: 0 })
  try {
    const first = strict.run(logo)
    const second = strict.run(logo)
    for (const [job, pattern] of [[second, /Too many images/], [first, /longer than/]] as const) {
      const error = await job.then(() => null, (e: unknown) => e as Error)
      assert.ok(error instanceof TRPCError && error.code === 'SERVICE_UNAVAILABLE', String(error))
      assert.match(error.message, pattern)
    }
  } finally {
    await strict.close()
  }
})

test.run()
