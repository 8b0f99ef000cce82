/**
 * Code-execution benchmark: the sandbox's overhead for a trivial program (print one line), median
 * of N warm runs, through the execute service (the gate, the pools, the sandboxes), beside the
 * same program run without a sandbox in the same run: `node -e` and `python3 -c` as fresh
 * processes, and QuickJS in this thread with nothing around it.
 *
 *   npx tsx bench/execute.ts [runs]
 *
 * A warm Python run includes nothing of Pyodide's load (the pool keeps a loaded process ready), but
 * the process it used is replaced after it: runs here are spaced so that the replacement is ready.
 * The first run's time (a load) is what a burst of Python runs larger than the warm pool waits for.
 */
import { spawnSync } from 'node:child_process'
import { getQuickJS } from 'quickjs-emscripten'
import { createExecuteService } from '../src/server/catalog/tools/execute/service.js'

const RUNS = Number(process.argv[2] ?? 15)

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

async function timeAsync(runs: number, task: () => Promise<unknown>) {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await task()
    times.push(performance.now() - started)
  }
  return median(times)
}

function timeProcess(command: string, args: string[]): number | null {
  if (spawnSync(command, ['--version']).status !== 0) return null
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    spawnSync(command, args)
    times.push(performance.now() - started)
  }
  return median(times)
}

async function timeBareQuickJs() {
  const quickjs = await getQuickJS()
  return timeAsync(RUNS, async () => {
    const context = quickjs.newContext()
    context.unwrapResult(context.evalCode('const line = "hi"')).dispose()
    context.dispose()
  })
}

const service = createExecuteService({ PLAZA_EXECUTE_PYTHON_WARM: '1' })
const run = (language: string, code: string) => service.run({ language, code })
try {
  // Warm-up: the worker thread's QuickJS module, and the first Pyodide process.
  const coldJs = performance.now()
  await run('javascript', 'console.log("hi")')
  const coldJsMs = performance.now() - coldJs
  const coldPy = performance.now()
  await run('python', 'print("hi")')
  const coldPyMs = performance.now() - coldPy

  const js = await timeAsync(RUNS, () => run('javascript', 'console.log("hi")'))
  const bareQuickJs = await timeBareQuickJs()
  const node = timeProcess(process.execPath, ['-e', 'console.log("hi")'])

  const pythonRuns = Math.min(RUNS, 5)
  const py: number[] = []
  for (let i = 0; i < pythonRuns; i++) {
    // Each run's process is replaced; give the replacement time to load so that the next run finds it ready.
    await new Promise((resolve) => setTimeout(resolve, coldPyMs * 1.5))
    const started = performance.now()
    await run('python', 'print("hi")')
    py.push(performance.now() - started)
  }
  const python3 = timeProcess('python3', ['-c', 'print("hi")'])

  const row = (name: string, ms: number | null, base?: number | null) =>
    `${name.padEnd(48)} ${ms === null ? '   (not installed)' : `${ms.toFixed(1).padStart(8)} ms`}${ms !== null && base ? `  ${(ms / base).toFixed(2)}x` : ''}`
  console.log(`median of ${RUNS} runs (Python: ${pythonRuns}), a program that prints one line`)
  console.log(row('javascript via /api/execute service (warm)', js, node))
  console.log(row('  QuickJS bare context in this thread', bareQuickJs))
  console.log(row('  node -e (fresh process, baseline)', node))
  console.log(row('python via /api/execute service (warm process)', median(py), python3))
  console.log(row('  python3 -c (fresh process, baseline)', python3))
  console.log(row('first javascript run (worker start)', coldJsMs))
  console.log(row('first python run (Pyodide load)', coldPyMs))
} finally {
  await service.close()
}
