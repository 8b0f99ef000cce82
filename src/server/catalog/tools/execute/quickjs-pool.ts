/**
 * The JavaScript sandbox's worker threads: the shared pool (workers/pool.ts) running
 * quickjs-worker.ts, each worker keeping its QuickJS module loaded and running one program at a
 * time. QuickJS's interrupt handler enforces the time limit inside the worker; a worker that
 * overruns it anyway (the backstop) or dies is terminated and replaced, and its program answers as
 * stopped: a short line on stderr, never the engine's own error text.
 */
import { JobOverranError, WorkerFailedError, WorkerPool, type JobTiming, type PoolTimers } from '../../../workers/pool.js'
import type { SandboxJob, SandboxResult } from './job.js'

/** Beyond the program's own limit, how long the interrupt handler has to stop it before the thread is terminated. */
const BACKSTOP_MS = 2000
/** A new worker that has not loaded QuickJS in this long is given up on. */
const START_TIMEOUT_MS = 30_000

export interface QuickJsPoolOptions {
  /** Programs that run at once. */
  size: number
  /** Each program's memory (and so each worker's WebAssembly memory, plus the engine's own). */
  memoryBytes: number
  /** Each program's CPU time. */
  timeoutMs: number
  /** Called with what a failed sandbox said, for the log (the program's answer gets one short line). */
  onFailure?: (detail: string) => void
  timers?: PoolTimers
}

export class QuickJsPool {
  private readonly pool: WorkerPool<SandboxJob, SandboxResult>

  constructor(private readonly options: QuickJsPoolOptions) {
    this.pool = new WorkerPool<SandboxJob, SandboxResult>(
      import.meta.url,
      'quickjs-worker',
      {
        size: options.size,
        // The execute service's gate bounds the waiting; this queue only has to hold what it lets through.
        queueLimit: options.size * 8,
        timeoutMs: options.timeoutMs + BACKSTOP_MS,
        startTimeoutMs: START_TIMEOUT_MS,
        // The worker holds nothing but the interpreter: a small heap of its own (QuickJS's memory is Wasm, capped separately).
        resourceLimits: { maxOldGenerationSizeMb: 128 },
        workerData: { memoryBytes: options.memoryBytes },
        timers: options.timers,
      },
      {
        shuttingDown: 'The JavaScript sandbox is shutting down',
        busy: 'Too many programs are running; try again shortly',
        overran: (seconds) => `Stopped: the program ran past its ${seconds} s time limit`,
        worker: 'JavaScript sandbox',
      },
    )
  }

  /** Loads QuickJS in every worker now, and keeps them loaded from then on. */
  warm(): Promise<void> {
    return this.pool.warm({ code: '', stdin: '', timeoutMs: 1000, memoryBytes: this.options.memoryBytes, outputBytes: 1024 })
  }

  get stats() {
    return this.pool.stats
  }

  async run(job: SandboxJob): Promise<{ result: SandboxResult; timing: JobTiming }> {
    const started = performance.now()
    const stopped = (reason: string, timedOut: boolean) => ({
      result: { stdout: '', stderr: `${reason}\n`, exit_code: timedOut ? 124 : 1, timed_out: timedOut, duration_ms: Math.round(performance.now() - started) },
      timing: { queueMs: 0, startMs: 0, runMs: Math.round(performance.now() - started) },
    })
    try {
      return await this.pool.runTimed(job)
    } catch (error) {
      if (error instanceof JobOverranError) return stopped(`Stopped: the program ran past its ${job.timeoutMs / 1000} s time limit`, true)
      if (error instanceof WorkerFailedError) {
        this.options.onFailure?.(error.message)
        return stopped('Stopped: the sandbox failed while running the program', false)
      }
      throw error
    }
  }

  close(graceMs = 0): Promise<void> {
    return this.pool.close(graceMs)
  }
}
