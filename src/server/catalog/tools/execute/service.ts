/**
 * Code execution on `Services`: JavaScript in QuickJS worker threads, Python in Pyodide processes,
 * other languages at a Piston provider, all behind one gate of `PLAZA_EXECUTE_CONCURRENCY` runs
 * (default 2). The pools start on the first run, so processes that never execute code load nothing;
 * from then on they keep their sandboxes loaded (`warm`), so later runs wait for no start.
 */
import type { ExecuteRequest, ExecuteResult } from '../../../../shared/schemas/execute.js'
import { parsePositiveInt } from '../../../config.js'
import { perProcess } from '../../../workers/priority.js'
import { Gate } from './gate.js'
import { pistonFromEnv, runOnPiston } from './piston.js'
import { PyodidePool } from './pyodide-pool.js'
import { QuickJsPool } from './quickjs-pool.js'

export const OUTPUT_BYTES = 1024 * 1024
const JS_MEMORY_BYTES = 64 * 1024 * 1024
const PYTHON_MEMORY_BYTES = 512 * 1024 * 1024

export interface ExecuteService {
  /** Runs a validated request; BusyError when every place is taken, 503 for a language whose provider is not set. */
  run(request: ExecuteRequest): Promise<ExecuteResult>
  /** The sandboxes, for the stats and tests: undefined until the language's first run. */
  readonly pools: { javascript?: QuickJsPool; python?: PyodidePool }
  /** Stops: no new run; running ones have `graceMs` to finish. */
  close(graceMs?: number): Promise<void>
}

export interface ExecuteServiceOptions {
  /** Processes of the cluster: the default concurrency and warm sandboxes are shared out among them. */
  processes?: number
  /** Where a sandbox's own failure is told (the caller gets a short line). */
  onFailure?: (message: string, detail: string) => void
}

export function createExecuteService(env: NodeJS.ProcessEnv, options: ExecuteServiceOptions = {}): ExecuteService {
  const concurrency = parsePositiveInt('PLAZA_EXECUTE_CONCURRENCY', env.PLAZA_EXECUTE_CONCURRENCY, perProcess(2, options.processes))
  const jsTimeoutMs = parsePositiveInt('PLAZA_EXECUTE_JS_TIMEOUT_MS', env.PLAZA_EXECUTE_JS_TIMEOUT_MS, 5000)
  const pythonTimeoutMs = parsePositiveInt('PLAZA_EXECUTE_PYTHON_TIMEOUT_MS', env.PLAZA_EXECUTE_PYTHON_TIMEOUT_MS, 10_000)
  const pythonWarm = parsePositiveInt('PLAZA_EXECUTE_PYTHON_WARM', env.PLAZA_EXECUTE_PYTHON_WARM, perProcess(2, options.processes))
  const gate = new Gate({ limit: concurrency, queue: concurrency * 4, waitMs: 2000 })
  const piston = pistonFromEnv(env)
  const pools: ExecuteService['pools'] = {}
  const javascript = () => {
    if (pools.javascript) return pools.javascript
    pools.javascript = new QuickJsPool({ size: concurrency, memoryBytes: JS_MEMORY_BYTES, timeoutMs: jsTimeoutMs, onFailure: (detail) => options.onFailure?.('a JavaScript sandbox failed', detail) })
    void pools.javascript.warm()
    return pools.javascript
  }
  const python = () => (pools.python ??= new PyodidePool({ warm: pythonWarm, onFailure: options.onFailure }))
  return {
    pools,
    run: async (request) => {
      const asked = performance.now()
      return gate.run(async () => {
        const waited = performance.now() - asked
        const stdin = request.stdin ?? ''
        // The schemas module builds its zod schemas on import: loaded here, not by every process that creates the services.
        const { localLanguageOf } = await import('../../../../shared/schemas/execute.js')
        const local = localLanguageOf(request.language)
        const job = { code: request.code, stdin, outputBytes: OUTPUT_BYTES }
        let queueMs = waited
        let startMs = 0
        let result
        if (local === 'javascript') {
          const run = await javascript().run({ ...job, timeoutMs: jsTimeoutMs, memoryBytes: JS_MEMORY_BYTES })
          queueMs += run.timing.queueMs
          startMs = run.timing.startMs
          result = run.result
        } else if (local === 'python') {
          const run = await python().run({ ...job, timeoutMs: pythonTimeoutMs, memoryBytes: PYTHON_MEMORY_BYTES })
          startMs = run.startMs
          result = run.result
        } else result = await runOnPiston(piston, request)
        return { ...result, language: local ?? request.language, queue_ms: Math.round(queueMs), start_ms: startMs }
      })
    },
    async close(graceMs = 0) {
      await Promise.all([pools.javascript?.close(graceMs), pools.python?.close(graceMs)])
    },
  }
}
