/**
 * The checkpointer (checkpointer.ts): a worker thread with a connection of its own that copies the
 * WAL's pages into the database file every few hundred milliseconds, so no request ever does it,
 * and restarts the WAL from its beginning once it has grown, so it cannot grow without bound.
 * Loads nothing but `libsql` (through connection.ts).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openConnection } from './connection.js'
import type { CheckpointReport, CheckpointerSettings } from './checkpointer.js'

const port = parentPort
if (!port) throw new Error('checkpoint-worker.ts runs as a worker thread')

const settings = workerData as CheckpointerSettings
const connection = openConnection(settings.file)
// No waiting inside SQLite: its busy handler sleeps 1, 2, 5, 10 ms between tries, and writers that
// retry every millisecond would take the write lock first every time. restartSoon() tries instead.
connection.exec('PRAGMA busy_timeout = 0')
const passive = connection.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw(true)
const restart = connection.prepare('PRAGMA wal_checkpoint(RESTART)').raw(true)

/** `[busy, frames in the WAL, frames copied]`, as `PRAGMA wal_checkpoint` answers. */
type Outcome = [number, number, number]

const pause = new Int32Array(new SharedArrayBuffer(4))
const RETRY_MS = 0.2

/**
 * Asks for a RESTART every RETRY_MS for at most `restartWaitMs`: it needs the write lock and a
 * moment when no reader reads an older snapshot, and on a busy server both come in short gaps.
 * Each try that gets the lock copies what is left, so the later ones are quick.
 */
function restartSoon(): boolean {
  const deadline = performance.now() + settings.restartWaitMs
  do {
    const [busy] = restart.get() as Outcome
    if (busy === 0) return true
    Atomics.wait(pause, 0, 0, RETRY_MS)
  } while (performance.now() < deadline)
  return false
}

function round(): CheckpointReport {
  const report: CheckpointReport = { restarted: false }
  try {
    const [, frames] = passive.get() as Outcome
    report.frames = frames
    if (frames >= settings.restartFrames) report.restarted = restartSoon()
  } catch (error) {
    report.error = String((error as Error)?.message ?? error)
  }
  return report
}

// The timer's rounds speak only of failures; a round asked for (`run`) answers with its report.
const timer = setInterval(() => {
  const report = round()
  if (report.error) port.postMessage(report)
}, settings.intervalMs)

port.on('message', (message: { type?: string; id?: number }) => {
  if (message?.type === 'run') port.postMessage({ ...round(), id: message.id })
  if (message?.type !== 'stop') return
  clearInterval(timer)
  connection.close()
  port.close()
})
