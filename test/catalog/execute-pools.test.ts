/**
 * The sandboxes' pools (issue #44 findings 3 and 6, issue #47's cold sandboxes): a Python process
 * that failed to load is never handed to a run; a crashed sandbox answers one short line, never
 * Pyodide's source; sequential runs are served by processes loaded ahead of them, the pool
 * refilling itself in the background; answers report their queue and start time. Waits are on the
 * pools' state, never on a clock.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { PyodidePool } from '../../src/server/catalog/tools/execute/pyodide-pool.js'
import { createExecuteService } from '../../src/server/catalog/tools/execute/service.js'
import { startTestServer } from '../helpers/server.js'

const job = (code: string) => ({ code, stdin: '', timeoutMs: 60_000, memoryBytes: 512 * 1024 ** 2, outputBytes: 1024 * 1024 })

/** Waits (on the event loop, not a clock) until `condition` holds. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10))
}

/** The processes this one started that run Pyodide (directly, or under unshare), from /proc. */
function pyodideChildren(): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('pyodide')) found.push(Number(entry))
    } catch {}
  }
  return found
}

test('python: a sandbox that failed to load is never handed out; the run gets a fresh one', async () => {
  const failures: string[] = []
  const pool = new PyodidePool({ warm: 2, snapshot: false, onFailure: (message) => failures.push(message) })
  try {
    pool.warm()
    await until(() => pool.stats.starting === 2 && pyodideChildren().length === 2)
    // Both warm processes die while loading (as under memory pressure, or a start past its time limit).
    for (const pid of pyodideChildren()) process.kill(pid, 'SIGKILL')
    await until(() => failures.length === 2)
    const { result } = await pool.run(job('print("fresh")'))
    assert.equal({ stdout: result.stdout, exit_code: result.exit_code }, { stdout: 'fresh\n', exit_code: 0 })
    assert.ok(failures.every((message) => /exited while starting/.test(message)), failures.join('; '))
  } finally {
    await pool.close()
  }
})

test('python: sequential runs are served by sandboxes loaded ahead of them; each one taken is replaced at once, in the background', async () => {
  const pool = new PyodidePool({ warm: 2 })
  try {
    pool.warm()
    await until(() => pool.stats.idle === 2)
    for (let i = 0; i < 4; i++) {
      const { result, startMs } = await pool.run(job(`print(${i})`))
      assert.is(result.stdout, `${i}\n`)
      assert.is(startMs, 0, `run ${i} waited for a load`)
      // Its replacement started with the run, not with the next request.
      assert.is(pool.stats.idle + pool.stats.starting, 2)
      await until(() => pool.stats.idle === 2)
    }
    // Two at once: both find a loaded process.
    const both = await Promise.all([pool.run(job('print("a")')), pool.run(job('print("b")'))])
    assert.equal(both.map((run) => [run.result.stdout, run.startMs]), [['a\n', 0], ['b\n', 0]])
  } finally {
    await pool.close()
  }
  assert.equal(pyodideChildren(), [])
})

test('python: a crashed sandbox answers one short line, never the engine\'s source or host paths (os.system)', async () => {
  const service = createExecuteService({ PLAZA_EXECUTE_PYTHON_WARM: '1' }, { onFailure: () => {} })
  try {
    const result = await service.run({ language: 'python', code: "import os\nprint('before', flush=True)\nos.system('id')" })
    assert.is(result.exit_code, 1)
    assert.match(result.stdout, /^before\n/)
    assert.is(result.stderr, 'Stopped: the sandbox does not allow starting a process (processes, threads, host files and sockets are refused)\n')
    assert.not.match(JSON.stringify(result), /pyodide\.asm|function|\/node_modules\/|Node\.js v/)
    assert.ok(JSON.stringify(result).length < 600, `${JSON.stringify(result).length} characters`)
  } finally {
    await service.close()
  }
})

test('javascript and python answers report queue_ms and start_ms beside duration_ms; warm sandboxes start in 0 ms', async () => {
  const server = await startTestServer({ env: { PLAZA_EXECUTE_PYTHON_WARM: '1' } })
  try {
    const run = (language: string, code: string) => server.request('POST', '/api/execute', { body: { language, code } })
    const first = await run('javascript', 'console.log(1)')
    assert.is(first.status, 200)
    for (const field of ['duration_ms', 'queue_ms', 'start_ms']) assert.type(first.body[field], 'number', field)
    // The first run warmed the JavaScript pool: every worker loaded, so the next run waits for none.
    const javascript = server.services.execute.pools.javascript!
    await until(() => javascript.stats.starting === 0)
    const second = await run('javascript', 'console.log(2)')
    assert.equal([second.body.stdout, second.body.start_ms], ['2\n', 0])

    await run('python', 'print(1)')
    const python = server.services.execute.pools.python!
    await until(() => python.stats.idle === 1)
    const warm = await run('python', 'print(2)')
    assert.equal([warm.body.stdout, warm.body.start_ms, warm.body.queue_ms], ['2\n', 0, 0])
  } finally {
    await server.close()
  }
})

test.run()
