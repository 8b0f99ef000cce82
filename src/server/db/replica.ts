/**
 * An embedded replica: the database read from a local file that libsql keeps in step with the
 * libsql server (`PLAZA_DATABASE_REPLICA` beside `PLAZA_DATABASE_URL`), and written on the server.
 *
 * - Reads are local: the same inline connection and reader threads as a local `plaza.db`
 *   (inline.ts, readers.ts), on the replica file; no round trip.
 * - Writes, transactions and the migrations go to the server over Hrana (server-client.ts), as on a
 *   host without a replica.
 * - The file is synced by a worker thread (replica-worker.ts) every SYNC_INTERVAL_MS, so what other
 *   hosts wrote shows here within about that, and **after each write of this process**: a write
 *   resolves only once the replica has its frame (the server answers each write with its
 *   replication index), so whoever wrote reads it at once, from this process or any other of the host
 *   (the next request waits for the host's latest write: `caughtUp` in client.ts).
 * - A replica that cannot sync (the server down) keeps serving what it has; writes then fail with
 *   DatabaseUnavailableError (503) and the replica catches up by itself when the server is back. A
 *   write the server acknowledged but the replica could not fetch in time is answered anyway (it is
 *   durable on the server), and said in the log.
 *
 * Each serving process has its own replica file (libsql's sync owns its file): the file named for a
 * process on its own, `<file>-<n>` for worker n of `plaza serve --workers N`.
 */
import type { Worker } from 'node:worker_threads'
import { RemoteDatabaseError } from './remote-error.js'
import type { ReplicaReport, ReplicaWorkerSettings } from './replica-worker.js'
import { startDbWorker } from './worker-thread.js'

/** How often the replica pulls what other hosts wrote. */
const SYNC_INTERVAL_MS = 1000

interface ReplicaSyncOptions {
  file: string
  url: string
  authToken?: string
  /** Describes the server for messages (no token). */
  where: string
  /** How long a write waits for the replica to have it before it is answered anyway. */
  waitMs: number
  /** Hears of a sync that failed, or of a write answered before the replica had it. */
  onError?: (message: string) => void
}

/** The replica file of a process: `file` for a process on its own (slot 0), `<file>-<slot>` for cluster worker `slot`. */
export function replicaFile(file: string, slot: number): string {
  return slot > 0 ? `${file}-${slot}` : file
}

/** The replica's sync thread, seen from the host. */
export class ReplicaSync {
  /** The latest frame the replica is known to have. */
  frame = 0n
  readonly #worker: Worker
  readonly #waiting = new Map<number, (report: ReplicaReport) => void>()
  #nextId = 0
  #failing = false

  private constructor(
    worker: Worker,
    private readonly options: ReplicaSyncOptions,
  ) {
    this.#worker = worker
  }

  /** Starts the sync thread; resolves after the first sync, or fails in one line saying why. */
  static async start(options: ReplicaSyncOptions): Promise<ReplicaSync> {
    const settings: ReplicaWorkerSettings = { file: options.file, url: options.url, authToken: options.authToken, intervalMs: SYNC_INTERVAL_MS }
    const worker = startDbWorker('replica-worker', settings)
    worker.unref()
    const first = await new Promise<ReplicaReport>((resolve) => {
      worker.once('message', resolve)
      worker.once('error', (error) => resolve({ ready: false, error: String(error?.message ?? error) }))
    })
    if (!first.ready || first.error) {
      await worker.terminate()
      throw new RemoteDatabaseError(`the embedded replica ${options.file} could not sync from the libsql server at ${options.where}: ${first.error}`)
    }
    const sync = new ReplicaSync(worker, options)
    sync.frame = BigInt(first.frame ?? '0')
    worker.on('message', (report: ReplicaReport) => sync.#hear(report))
    worker.on('error', (error) => options.onError?.(`the embedded replica's sync thread failed: ${error?.message ?? error}`))
    return sync
  }

  #hear(report: ReplicaReport): void {
    // libsql's sync errors carry the whole gRPC answer: its first words are what the log needs.
    if (report.error) report.error = report.error.replace(/, metadata: MetadataMap.*$/s, '').slice(0, 300)
    // As the sync reports it, even lower: a primary that crashed numbers its new log from the start again.
    if (report.frame !== undefined) this.frame = BigInt(report.frame)
    // A failing sync is said once, and its recovery once.
    if (report.error && !this.#failing) this.options.onError?.(`the embedded replica ${this.options.file} cannot sync from ${this.options.where}: ${report.error}`)
    if (report.error === undefined && this.#failing) this.options.onError?.(`the embedded replica ${this.options.file} syncs again`)
    this.#failing = report.error !== undefined
    if (report.id !== undefined) {
      const resolve = this.#waiting.get(report.id)
      this.#waiting.delete(report.id)
      resolve?.(report)
    }
  }

  /**
   * Syncs, and resolves once the replica has `index` (a write of this host), or after `waitMs`
   * whatever it has. Always a sync: a frame number the replica already passed may be of a log the
   * primary has since replaced (after a crash), so only a sync after the write can tell.
   */
  async until(index: bigint): Promise<void> {
    const id = this.#nextId++
    const report = await new Promise<ReplicaReport | null>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id)
        resolve(null)
      }, this.options.waitMs)
      this.#waiting.set(id, (answer) => {
        clearTimeout(timer)
        resolve(answer)
      })
      this.#worker.postMessage({ type: 'sync', id })
    })
    if (!report || report.error || BigInt(report.frame ?? '0') < index) {
      // Durable on the server, so answered; only this process's next reads may miss it for a moment.
      this.options.onError?.(`a write was answered before the embedded replica had it (frame ${index}, the replica at ${this.frame}${report?.error ? `: ${report.error}` : ''})`)
    }
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()))
    this.#worker.postMessage({ type: 'stop' })
    const timer = setTimeout(() => void this.#worker.terminate(), 5000)
    await exited
    clearTimeout(timer)
  }
}

