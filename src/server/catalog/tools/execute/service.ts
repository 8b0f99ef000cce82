/**
 * Code execution on `Services`: JavaScript in QuickJS worker threads, Python in Pyodide processes,
 * other languages at a Piston provider, all behind one gate of `PLAZA_EXECUTE_CONCURRENCY` runs
 * (default 2). The pools start on the first run, so processes that never execute code load nothing.
 */
import type { ExecuteRequest, ExecuteResult } from '../../../../shared/schemas/execute.js'
import { parsePositiveInt } from '../../../config.js'
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
  close(): Promise<void>
}

export function createExecuteService(env: NodeJS.ProcessEnv): ExecuteService {
  const concurrency = parsePositiveInt('PLAZA_EXECUTE_CONCURRENCY', env.PLAZA_EXECUTE_CONCURRENCY, 2)
  const jsTimeoutMs = parsePositiveInt('PLAZA_EXECUTE_JS_TIMEOUT_MS', env.PLAZA_EXECUTE_JS_TIMEOUT_MS, 5000)
  const pythonTimeoutMs = parsePositiveInt('PLAZA_EXECUTE_PYTHON_TIMEOUT_MS', env.PLAZA_EXECUTE_PYTHON_TIMEOUT_MS, 10_000)
  const pythonWarm = parsePositiveInt('PLAZA_EXECUTE_PYTHON_WARM', env.PLAZA_EXECUTE_PYTHON_WARM, 1)
  const gate = new Gate({ limit: concurrency, queue: concurrency * 4, waitMs: 2000 })
  const piston = pistonFromEnv(env)
  let javascript: QuickJsPool | undefined
  let python: PyodidePool | undefined
  return {
    run: (request) =>
      gate.run(async () => {
        const stdin = request.stdin ?? ''
        // The schemas module builds its zod schemas on import: loaded here, not by every process that creates the services.
        const { localLanguageOf } = await import('../../../../shared/schemas/execute.js')
        const local = localLanguageOf(request.language)
        const job = { code: request.code, stdin, outputBytes: OUTPUT_BYTES }
        const result =
          local === 'javascript'
            ? await (javascript ??= new QuickJsPool(concurrency, JS_MEMORY_BYTES)).run({ ...job, timeoutMs: jsTimeoutMs, memoryBytes: JS_MEMORY_BYTES })
            : local === 'python'
              ? await (python ??= new PyodidePool({ warm: pythonWarm })).run({ ...job, timeoutMs: pythonTimeoutMs, memoryBytes: PYTHON_MEMORY_BYTES })
              : await runOnPiston(piston, request)
        return { ...result, language: local ?? request.language }
      }),
    async close() {
      await Promise.all([javascript?.close(), python?.close()])
    },
  }
}
