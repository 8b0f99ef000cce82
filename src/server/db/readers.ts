/**
 * Reads off the event loop: a few worker threads, each with its own read-only connection to the
 * same WAL database, behind a drizzle database (the sqlite-proxy driver). A slow read then delays
 * only the reads queued behind it, never the event loop, the writes or the other workers. WAL
 * gives each read a snapshot of everything committed before it started, so a read issued after a
 * write has committed sees it.
 */
import type { Worker } from 'node:worker_threads'
// The error class alone (the same one @libsql/client exports), without loading the client's remote protocols.
import { LibsqlError } from '@libsql/core/api'
import { drizzle } from 'drizzle-orm/sqlite-proxy'
import { primaryCode } from './connection.js'
import type { AnyDb } from './prepared.js'
import * as schema from './schema.js'
import { startDbWorker } from './worker-thread.js'

/**
 * A database that only reads: the inline reader (inline.ts), the worker pool, or the write client
 * where there is neither. Query-builder results are the same on all of them. Raw `sql` is not:
 * `all()`/`get()` give named objects on the write client and the inline reader and arrays on the
 * workers (sqlite-proxy), so read raw results by index (`values()`), which all of them support.
 */
export type ReadDb = AnyDb

export type ReadMethod = 'run' | 'all' | 'values' | 'get'

export interface ReadRequest {
  id: number
  sql: string
  params: unknown[]
  /** `time`: the read is run to its end for the pages it visits, and answered by how long it took (`ms`), without rows. */
  method: ReadMethod | 'time'
}

export type ReadResponse =
  | { id: number; rows: unknown[]; ms?: number; error?: undefined }
  | { id: number; rows?: undefined; error: { message: string; code?: string; rawCode?: number } }

interface Pending {
  request: ReadRequest
  resolve: (response: { rows: unknown[]; ms?: number }) => void
  reject: (error: unknown) => void
}

interface Slot {
  worker: Worker
  busy: Pending | null
}

/**
 * The reader workers. They start on the first read (a process that never reads pays nothing),
 * take one query at a time each, and queue the rest in arrival order. A worker that dies fails
 * only its own query and is replaced on demand.
 */
export class ReaderPool {
  readonly #slots: Slot[] = []
  readonly #queue: Pending[] = []
  #nextId = 0
  #closed = false

  constructor(
    private readonly file: string,
    private readonly size: number,
  ) {}

  /** Queries waiting for a free worker. */
  get waiting(): number {
    return this.#queue.length
  }

  query(sql: string, params: unknown[], method: ReadMethod): Promise<unknown[]> {
    return this.#send(sql, params, method).then((response) => response.rows)
  }

  /** Runs a read for the pages it visits (a warming read, db/warm.ts): resolves to the milliseconds the worker spent on it, its wait for a worker not counted. */
  time(sql: string, params: unknown[]): Promise<number> {
    return this.#send(sql, params, 'time').then((response) => response.ms ?? 0)
  }

  #send(sql: string, params: unknown[], method: ReadRequest['method']): Promise<{ rows: unknown[]; ms?: number }> {
    if (this.#closed) return Promise.reject(new LibsqlError('The database is closed', 'CLIENT_CLOSED'))
    return new Promise((resolve, reject) => {
      const pending = { request: { id: this.#nextId++, sql, params, method }, resolve, reject }
      const slot = this.#slots.find((candidate) => !candidate.busy) ?? (this.#slots.length < this.size ? this.#spawn() : null)
      if (slot) this.#run(slot, pending)
      else this.#queue.push(pending)
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const pending of this.#queue.splice(0)) pending.reject(new LibsqlError('The database is closed', 'CLIENT_CLOSED'))
    await Promise.all(this.#slots.splice(0).map((slot) => slot.worker.terminate()))
  }

  #spawn(): Slot {
    const slot: Slot = { worker: startDbWorker('reader-worker', { file: this.file }), busy: null }
    // An idle worker must not keep the process alive; a busy one must, or a script awaiting a read could exit early.
    slot.worker.unref()
    slot.worker.on('message', (response: ReadResponse) => {
      const pending = slot.busy
      if (!pending || pending.request.id !== response.id) return
      this.#next(slot)
      if (response.error) {
        const { message, code, rawCode } = response.error
        pending.reject(new LibsqlError(message, primaryCode(code), code, rawCode))
      } else pending.resolve(response)
    })
    slot.worker.on('error', (error) => this.#fail(slot, error))
    slot.worker.on('exit', (code) => this.#fail(slot, new Error(`reader worker exited with code ${code}`)))
    this.#slots.push(slot)
    return slot
  }

  #run(slot: Slot, pending: Pending) {
    slot.busy = pending
    slot.worker.ref()
    slot.worker.postMessage(pending.request)
  }

  /** Frees a slot after a query and hands it the next waiting one. */
  #next(slot: Slot) {
    slot.busy = null
    const next = this.#queue.shift()
    if (next) this.#run(slot, next)
    else slot.worker.unref()
  }

  /** A worker that failed or exited is dropped; its query fails and the queue moves on with a fresh worker. */
  #fail(slot: Slot, error: unknown) {
    const index = this.#slots.indexOf(slot)
    if (index < 0) return
    this.#slots.splice(index, 1)
    slot.worker.removeAllListeners()
    slot.worker.on('error', () => {})
    void slot.worker.terminate()
    slot.busy?.reject(error)
    const next = this.#queue.shift()
    if (next && !this.#closed) this.#run(this.#spawn(), next)
  }
}

/** A drizzle database whose every query runs in the pool. It reads only: the connections are `query_only`. */
export function readDatabase(pool: ReaderPool): ReadDb {
  return drizzle(
    async (sql, params, method) => {
      const rows = await pool.query(sql, params, method)
      // sqlite-proxy takes `get`'s one row (array) as `rows`, and the array of rows otherwise.
      return { rows: method === 'get' ? (rows[0] as any[]) : rows }
    },
    { schema },
  )
}
