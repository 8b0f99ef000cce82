/**
 * The worker pool behind renders, speech, cards and the JavaScript sandbox (workers/pool.ts), with
 * a worker whose jobs misbehave on request (fixtures/pool-worker.ts). Time budgets run on timers
 * the test fires itself: a job overruns when the test says so, never because the machine is slow.
 */
import { getPriority } from 'node:os'
import { TRPCError } from '@trpc/server'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { PoolBusyError, WorkerPool, WORKER_NICE, type PoolOptions, type PoolTimers } from '../../src/server/workers/pool.js'
import { perProcess } from '../../src/server/workers/priority.js'
import type { FixtureJob, FixtureResult } from './fixtures/pool-worker.js'

const BUDGET_MS = 1000

/** Timers that fire only when the test fires them: job budgets (BUDGET_MS) and start timeouts apart. */
function manualTimers() {
  const pending = new Set<{ callback: () => void; ms: number }>()
  const timers: PoolTimers = {
    set: (callback, ms) => {
      const timer = { callback, ms }
      pending.add(timer)
      return timer
    },
    clear: (handle) => void pending.delete(handle as { callback: () => void; ms: number }),
  }
  const overrun = () => {
    for (const timer of [...pending]) {
      if (timer.ms !== BUDGET_MS) continue
      pending.delete(timer)
      timer.callback()
    }
  }
  return { timers, overrun }
}

function fixturePool(options: Partial<PoolOptions> = {}) {
  return new WorkerPool<FixtureJob, FixtureResult>(import.meta.url, 'fixtures/pool-worker', { size: 2, timeoutMs: BUDGET_MS, queueLimit: 64, ...options }, {
    shuttingDown: 'The fixture is shutting down',
    busy: 'Too many fixture jobs',
    overran: (seconds) => `The job took longer than ${seconds} s`,
    worker: 'fixture',
  })
}

/** Settles to what happened, so a test can count every answer. */
const outcome = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as Error }),
  )

/** Waits (on the event loop, not a clock) until `condition` holds. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

test('hostile and valid jobs mixed: every job is answered, valid ones with their results, and the pool serves on', async () => {
  const { timers, overrun } = manualTimers()
  const pool = fixturePool({ timers })
  try {
    const kinds: Array<FixtureJob['kind'] | 'uncloneable'> = []
    for (let i = 0; i < 40; i++) kinds.push(['echo', 'echo', 'throw', 'echo', 'spin', 'refuse', 'echo', 'exit', 'hang', 'uncloneable'][i % 10] as FixtureJob['kind'])
    const stuck = new Set(['spin', 'hang'])
    const settled = new Set<number>()
    const answers = kinds.map((kind, i) => {
      // A job holding a function cannot be posted to a worker (as `color=constructor` once made one).
      const job = (kind === 'uncloneable' ? { kind: 'echo', value: i, render: () => i } : kind === 'echo' ? { kind, value: i } : { kind }) as FixtureJob
      const answer = outcome(pool.run(job))
      void answer.then(() => settled.add(i))
      return answer
    })
    // Whenever every job the workers hold is one that never ends, their budgets run out.
    while (settled.size < kinds.length) {
      await until(() => {
        const dispatched = kinds.length - pool.stats.waiting
        const held = kinds.slice(0, dispatched).filter((_, i) => !settled.has(i))
        return settled.size === kinds.length || (pool.stats.running > 0 && held.every((kind) => stuck.has(kind)))
      })
      overrun()
    }
    const results = await Promise.all(answers)
    assert.is(results.length, 40)
    results.forEach((result, i) => {
      const kind = kinds[i]
      if (kind === 'echo') return assert.equal(result, { ok: true, value: { value: i } }, `job ${i}`)
      assert.is(result.ok, false, `job ${i} (${kind}) should have failed`)
      const error = (result as { error: Error }).error
      if (stuck.has(kind)) assert.ok(error instanceof TRPCError && error.code === 'SERVICE_UNAVAILABLE' && /longer than 1 s/.test(error.message), `${kind}: ${error}`)
      else if (kind === 'refuse') assert.ok(error instanceof TRPCError && error.code === 'BAD_REQUEST' && error.message === 'the job is wrong', `${kind}: ${error}`)
      else if (kind === 'throw') assert.match(error.message, /fixture failed: Error: the job broke/)
      else if (kind === 'exit') assert.match(error.message, /fixture worker failed/)
      else assert.match(error.message, /could not be sent to its worker/)
    })
    assert.equal(await pool.run({ kind: 'echo', value: 99 }), { value: 99 })
    assert.ok(pool.stats.workers <= 2, JSON.stringify(pool.stats))
  } finally {
    await pool.close()
  }
})

test('a full queue is a 503 with Retry-After at once; the queued jobs are served once the worker is free', async () => {
  const { timers, overrun } = manualTimers()
  const pool = fixturePool({ size: 1, queueLimit: 2, timers })
  try {
    const hang = outcome(pool.run({ kind: 'hang' }))
    const queued = [outcome(pool.run({ kind: 'echo', value: 1 })), outcome(pool.run({ kind: 'echo', value: 2 }))]
    const refused = await outcome(pool.run({ kind: 'echo', value: 3 }))
    assert.is(refused.ok, false)
    const error = (refused as { error: Error }).error
    assert.ok(error instanceof PoolBusyError && error.code === 'SERVICE_UNAVAILABLE' && error.retryAfter === 2, String(error))
    assert.is(error.message, 'Too many fixture jobs')
    await until(() => pool.stats.running === 1)
    overrun()
    assert.is((await hang).ok, false)
    assert.equal(await Promise.all(queued), [{ ok: true, value: { value: 1 } }, { ok: true, value: { value: 2 } }])
  } finally {
    await pool.close()
  }
})

test('close answers the running and the queued jobs (503) rather than dropping them; a closed pool refuses at once', async () => {
  const { timers } = manualTimers()
  const pool = fixturePool({ size: 1, timers })
  const running = outcome(pool.run({ kind: 'spin' }))
  const queued = outcome(pool.run({ kind: 'echo', value: 1 }))
  await until(() => pool.stats.running === 1)
  await pool.close()
  for (const result of [await running, await queued]) {
    assert.is(result.ok, false)
    const error = (result as { error: Error }).error
    assert.ok(error instanceof PoolBusyError && error.message === 'The fixture is shutting down', String(error))
  }
  assert.is(pool.stats.workers, 0)
  const late = await outcome(pool.run({ kind: 'echo', value: 2 }))
  assert.ok(!late.ok && late.error instanceof PoolBusyError)
})

test('close while the workers are still warming: warm() resolves rather than waiting for ever', async () => {
  const pool = fixturePool({ size: 2 })
  const warming = pool.warm({ kind: 'echo', value: 0 })
  assert.is(pool.stats.starting, 2)
  await pool.close()
  await warming
  assert.is(pool.stats.workers, 0)
})

test('close with a grace lets running and queued jobs finish first', async () => {
  const pool = fixturePool({ size: 1 })
  const jobs = [outcome(pool.run({ kind: 'echo', value: 1 })), outcome(pool.run({ kind: 'echo', value: 2 }))]
  await pool.close(60_000)
  assert.equal(await Promise.all(jobs), [{ ok: true, value: { value: 1 } }, { ok: true, value: { value: 2 } }])
})

test('results travel whole: a pooled Buffer is copied, a buffer of its own moved (Node 24 refuses to transfer the first)', async () => {
  const pool = fixturePool({ size: 1 })
  try {
    const result = await pool.run({ kind: 'buffers' })
    assert.is(Buffer.from(result.small!).toString(), 'small')
    assert.equal([...result.whole!], [7, 7, 7, 7, 7, 7, 7, 7])
  } finally {
    await pool.close()
  }
})

test('a warmed pool keeps every worker ready: a worker that dies is replaced at once, and the next job waits for no start', async () => {
  const pool = fixturePool({ size: 2 })
  try {
    await pool.warm({ kind: 'echo', value: 0 })
    assert.equal(pool.stats, { workers: 2, starting: 0, idle: 2, running: 0, waiting: 0 })
    const replaced = new Promise((resolve) => pool.once('ready', resolve))
    const died = await outcome(pool.run({ kind: 'exit' }))
    assert.is(died.ok, false)
    // No job asked for it: the pool started the replacement itself.
    await replaced
    assert.equal(pool.stats, { workers: 2, starting: 0, idle: 2, running: 0, waiting: 0 })
    const { result, timing } = await pool.runTimed({ kind: 'echo', value: 5 })
    assert.equal(result, { value: 5 })
    assert.is(timing.startMs, 0)
    assert.is(timing.queueMs >= 0 && timing.runMs >= 0, true)
  } finally {
    await pool.close()
  }
})

test('a pool not warmed starts a worker for a job, and the job reports the wait as start time', async () => {
  const pool = fixturePool({ size: 2 })
  try {
    const { timing } = await pool.runTimed({ kind: 'echo', value: 1 })
    assert.is(pool.stats.workers, 1)
    assert.is(timing.queueMs, 0)
    assert.ok(timing.startMs >= 0)
  } finally {
    await pool.close()
  }
})

test('workers run at a lower priority than the process (nice WORKER_NICE)', async () => {
  const pool = fixturePool({ size: 1 })
  try {
    const { nice } = await pool.run({ kind: 'nice' })
    assert.is(nice, Math.max(WORKER_NICE, getPriority()))
  } finally {
    await pool.close()
  }
})

test('workers that cannot start (a module gone) are retried, then the waiting jobs are answered 503 rather than left waiting', async () => {
  const pool = fixturePool({ size: 1, workerData: { failStart: true } })
  try {
    const failures: unknown[] = []
    pool.on('start-failed', (error) => failures.push(error))
    const result = await outcome(pool.run({ kind: 'echo', value: 1 }))
    assert.is(result.ok, false)
    const error = (result as { error: Error }).error
    assert.ok(error instanceof PoolBusyError && /cannot start/.test(error.message), String(error))
    assert.is(failures.length, 3)
  } finally {
    await pool.close()
  }
})

test('in a cluster each process starts its share of the machine-wide pool sizes, at least one', () => {
  assert.equal([perProcess(4), perProcess(4, 2), perProcess(4, 8), perProcess(2, 3), perProcess(1, 2)], [4, 2, 1, 1, 1])
})

test.run()
