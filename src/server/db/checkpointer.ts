/**
 * WAL checkpoints off the request path, for a serving process on a local file.
 *
 * By default SQLite checkpoints from inside a commit: the connection that commits past
 * `wal_autocheckpoint` frames copies them into the database file and syncs it, there and then, on
 * the event loop. And a checkpoint can only rewind the WAL to its beginning when no reader still
 * reads an older snapshot, which on a server under load never happens: the WAL then grows without
 * bound (550 MB after a few minutes of writes on the 1M-post network), crowding the database's
 * pages out of the page cache.
 *
 * So a serving process turns its write connections' automatic checkpoints off and runs this
 * instead: a worker thread (checkpoint-worker.ts) that copies what it can every CHECKPOINT_INTERVAL_MS
 * (PASSIVE: it waits for nothing and blocks nobody), and once the WAL holds RESTART_FRAMES or more,
 * asks for a RESTART until one goes through (for at most RESTART_WAIT_MS): it takes the write lock
 * for a moment and needs the readers of older snapshots gone, and then the next commit writes from
 * the WAL's beginning.
 * `journal_size_limit` (connection.ts) then cuts the file back. Processes sharing the file may each
 * run one: checkpoints are serialized by SQLite, and a busy one is simply tried again.
 */
import type { Worker } from 'node:worker_threads'
import { startDbWorker } from './worker-thread.js'

export interface CheckpointerSettings {
  file: string
  intervalMs: number
  /** WAL frames (pages) from which a RESTART is asked for. */
  restartFrames: number
  /** How long the worker keeps asking for a RESTART (it needs the write lock, and no reader of an older snapshot). */
  restartWaitMs: number
}

/** What a round did: the WAL's frames when it began, whether it rewound the WAL, or why it failed. */
export interface CheckpointReport {
  frames?: number
  restarted: boolean
  error?: string
}

export const CHECKPOINT_INTERVAL_MS = 200
/** 8,192 pages: 32 MiB of WAL. */
export const RESTART_FRAMES = 8192
export const RESTART_WAIT_MS = 50

export interface Checkpointer {
  /** Runs a round now, beside the timer's, and resolves with its report (for tests and tools). */
  runNow(): Promise<CheckpointReport>
  close(): Promise<void>
}

/**
 * Runs the checkpointer for `file`. A worker that fails is started again a second later; `onError`
 * hears about a failed round or worker (the WAL only grows meanwhile, as it would without this).
 */
export function startCheckpointer(
  file: string,
  { onError = () => {}, ...overrides }: Partial<Omit<CheckpointerSettings, 'file'>> & { onError?: (message: string) => void } = {},
): Checkpointer {
  const settings: CheckpointerSettings = { file, intervalMs: CHECKPOINT_INTERVAL_MS, restartFrames: RESTART_FRAMES, restartWaitMs: RESTART_WAIT_MS, ...overrides }
  let closed = false
  let worker: Worker
  const waiting = new Map<number, (report: CheckpointReport) => void>()
  let nextId = 0
  const start = () => {
    worker = startDbWorker('checkpoint-worker', settings)
    // The checkpointer never keeps a process alive.
    worker.unref()
    worker.on('message', ({ id, ...report }: CheckpointReport & { id?: number }) => {
      if (report.error) onError(report.error)
      if (id === undefined) return
      waiting.get(id)?.(report)
      waiting.delete(id)
    })
    worker.on('error', (error) => onError(String(error?.message ?? error)))
    worker.on('exit', () => {
      for (const resolve of waiting.values()) resolve({ restarted: false, error: 'the checkpointer stopped' })
      waiting.clear()
      if (closed) return
      setTimeout(() => closed || start(), 1000).unref()
    })
  }
  start()
  return {
    runNow: () =>
      new Promise((resolve) => {
        const id = nextId++
        waiting.set(id, resolve)
        worker.postMessage({ type: 'run', id })
      }),
    async close() {
      if (closed) return
      closed = true
      const exited = new Promise((resolve) => worker.once('exit', resolve))
      worker.postMessage({ type: 'stop' })
      // A worker in the middle of a restart finishes it first (at most RESTART_WAIT_MS); terminate bounds the rest.
      const timer = setTimeout(() => void worker.terminate(), 1000)
      await exited
      clearTimeout(timer)
    },
  }
}
