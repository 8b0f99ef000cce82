/** What a sandbox is asked to run and what it answers, shared by the pools and their workers. */
import type { ExecuteResult } from '../../../../shared/schemas/execute.js'

export interface SandboxJob {
  code: string
  stdin: string
  /** CPU time (JavaScript) or wall-clock time (Python) the program may take. */
  timeoutMs: number
  /** Memory the program may use (QuickJS's heap; the Python process's resident size). */
  memoryBytes: number
  /** Cap on each of stdout and stderr. */
  outputBytes: number
}

export type SandboxResult = Omit<ExecuteResult, 'language' | 'queue_ms' | 'start_ms'>
