/**
 * The client for a libsql server (sqld, Turso) over Hrana-over-HTTP: @libsql/client's own HTTP
 * client, with three things a server needs that it does not do by itself.
 *
 * - **A deadline.** Every request has REQUEST_TIMEOUT_MS to be answered. Without one a request
 *   waits for as long as the server holds it, and a sqld replica whose primary is gone holds a
 *   write for ever (it retries the primary), so a Plaza host on it would hang every write.
 *   Migrations have no deadline (one may rightly run for minutes on a large database).
 * - **Unavailability said as such.** A server that cannot be reached, does not answer in time,
 *   answers HTTP 5xx, or timed out our transaction is a `DatabaseUnavailableError` (remote-error.ts),
 *   which the API answers with 503 and Retry-After instead of a 500.
 * - **Read-your-writes through a replica.** sqld gives each result the replication index (the
 *   frame of its replication log) it was produced at, and takes one on a request: a replica then
 *   answers only once it has replicated that far. This client keeps the index of the latest write
 *   this host made (`WriteIndex`, shared by the processes of one `plaza serve`) and sends it with
 *   every request, so a read through a replica sees every write made through this host before it,
 *   whichever of its processes made it. On a primary the index is already reached, and costs nothing.
 *   `afterWrite` hears of each write's index (an embedded replica syncs to it, replica.ts).
 */
import { createClient, type Client, type InArgs, type InStatement, type ResultSet, type Transaction, type TransactionMode } from '@libsql/client'
import { DatabaseUnavailableError } from './remote-error.js'
import type { WriteIndex } from './write-index.js'

/** How long a request to the server may take before it counts as unavailable. */
export const REQUEST_TIMEOUT_MS = 10_000

export interface ServerClientOptions {
  url: string
  authToken?: string
  /** Where this host's latest write index is kept (write-index.ts). */
  writes: WriteIndex
  /** Overrides REQUEST_TIMEOUT_MS (tests). */
  requestTimeoutMs?: number
  /** Called after a write that reached `index`; the write resolves when this does. */
  afterWrite?: (index: bigint) => Promise<void>
}

const REPLICATION_INDEX = /"replication_index":"(\d+)"/g
const WROTE = /"rows_written":[1-9]/
/** A statement ending a transaction: its result's index is the transaction's. */
const ENDS_TRANSACTION = /^\s*(?:COMMIT|END)\b/i

interface PipelineRequest {
  requests?: Array<{ type: string; stmt?: { sql?: string; replication_index?: string }; batch?: { replication_index?: string; steps?: Array<{ stmt?: { sql?: string } }> } }>
}

/** The largest replication index in a pipeline's response text, or 0n. */
function largestIndex(text: string): bigint {
  let largest = 0n
  for (const match of text.matchAll(REPLICATION_INDEX)) {
    const index = BigInt(match[1])
    if (index > largest) largest = index
  }
  return largest
}

function endsTransaction(body: PipelineRequest): boolean {
  return (body.requests ?? []).some(
    (request) => ENDS_TRANSACTION.test(request.stmt?.sql ?? '') || (request.batch?.steps ?? []).some((step) => ENDS_TRANSACTION.test(step.stmt?.sql ?? '')),
  )
}

/**
 * A `fetch` for @libsql/client: the deadline, the replication index sent with each pipeline, and
 * the index of each write noted from its answer.
 */
function serverFetch(writes: WriteIndex, timeoutMs: number | null) {
  return async (request: Request): Promise<Response> => {
    const signal = timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs)
    if (request.method !== 'POST' || !/\/pipeline$/.test(new URL(request.url).pathname)) return fetch(request, { signal })
    const body = JSON.parse(await request.text()) as PipelineRequest
    const latest = writes.latest()
    if (latest > 0n) {
      for (const step of body.requests ?? []) {
        if (step.type === 'execute' && step.stmt) step.stmt.replication_index = String(latest)
        else if (step.type === 'batch' && step.batch) step.batch.replication_index = String(latest)
      }
    }
    const response = await fetch(request.url, { method: 'POST', headers: request.headers, body: JSON.stringify(body), signal })
    if (!response.ok) return response
    const text = await response.text()
    // A write's frame, or a transaction's commit: what this host's later reads must see.
    if (WROTE.test(text) || endsTransaction(body)) writes.note(largestIndex(text))
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

/** Whether `error` (or a cause of it) means the server is unavailable rather than that the statement failed. */
export function isUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof DatabaseUnavailableError) return true
    const { name, message, code, status } = cause as { name?: string; message?: unknown; code?: unknown; status?: unknown }
    // The deadline (AbortSignal.timeout), or the connection refused, reset or cut (undici's `fetch failed`).
    if (name === 'TimeoutError' || name === 'AbortError') return true
    if (name === 'TypeError' && message === 'fetch failed') return true
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT)$/.test(code)) return true
    // The server answered 5xx, or ended our transaction or stream for taking too long (sqld: 5 s holding the write lock).
    if (typeof status === 'number' && status >= 500) return true
    if (code === 'TRANSACTION_TIMEOUT' || code === 'STREAM_EXPIRED') return true
  }
  return false
}

/** What the log says of an unavailable server: the cause, never the token. */
function unavailable(error: unknown, where: string): DatabaseUnavailableError {
  if (error instanceof DatabaseUnavailableError) return error
  const text = (error as Error)?.name === 'TimeoutError' ? 'no answer in time' : String((error as Error)?.message ?? error)
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  return new DatabaseUnavailableError(where, `${text}${cause?.code ? ` (${cause.code})` : cause?.message ? ` (${cause.message})` : ''}`, { cause: error })
}

/** A libsql `Client` on a libsql server, as described at the top of this file. */
export class ServerClient implements Client {
  readonly protocol = 'http'
  readonly #client: Client
  /** Migrations only: no deadline. */
  readonly #unhurried: Client
  readonly #writes: WriteIndex
  readonly #afterWrite?: (index: bigint) => Promise<void>
  readonly #where: string

  constructor(options: ServerClientOptions & { where: string }) {
    this.#writes = options.writes
    this.#afterWrite = options.afterWrite
    this.#where = options.where
    this.#client = createClient({ url: options.url, authToken: options.authToken, fetch: serverFetch(options.writes, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS) })
    this.#unhurried = createClient({ url: options.url, authToken: options.authToken, fetch: serverFetch(options.writes, null) })
  }

  get closed(): boolean {
    return this.#client.closed
  }

  /** Runs `call`, says an unavailable server as such, and lets an embedded replica catch up with a write before it resolves. */
  async #run<T>(call: () => Promise<T>): Promise<T> {
    const before = this.#writes.own
    let result: T
    try {
      result = await call()
    } catch (error) {
      throw isUnavailable(error) ? unavailable(error, this.#where) : error
    }
    if (this.#afterWrite && this.#writes.own > before) await this.#afterWrite(this.#writes.own)
    return result
  }

  execute(stmt: InStatement): Promise<ResultSet>
  execute(sql: string, args?: InArgs): Promise<ResultSet>
  execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    return this.#run(() => (typeof stmtOrSql === 'string' ? this.#client.execute(stmtOrSql, args) : this.#client.execute(stmtOrSql)))
  }

  batch(stmts: Array<InStatement | [string, InArgs?]>, mode?: TransactionMode): Promise<ResultSet[]> {
    return this.#run(() => this.#client.batch(stmts, mode))
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#run(() => this.#unhurried.migrate(stmts))
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#run(() => this.#client.executeMultiple(sql))
  }

  async transaction(mode?: TransactionMode): Promise<Transaction> {
    const tx = await this.#run(() => this.#client.transaction(mode))
    return new ServerTransaction(tx, (call) => this.#run(call))
  }

  sync(): never {
    throw new Error('a libsql server has nothing to sync')
  }

  reconnect(): void {
    this.#client.reconnect()
    this.#unhurried.reconnect()
  }

  close(): void {
    this.#client.close()
    this.#unhurried.close()
  }
}

/**
 * A transaction on one stream of the server. Its rollback (drizzle's, after an error) never hides
 * that error: a server that cannot be reached drops the stream's transaction by itself when the
 * stream expires, and one that timed the transaction out has already rolled it back.
 */
class ServerTransaction implements Transaction {
  constructor(
    private readonly tx: Transaction,
    private readonly run: <T>(call: () => Promise<T>) => Promise<T>,
  ) {}

  get closed(): boolean {
    return this.tx.closed
  }

  execute(stmt: InStatement): Promise<ResultSet> {
    return this.run(() => this.tx.execute(stmt))
  }

  batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.run(() => this.tx.batch(stmts))
  }

  executeMultiple(sql: string): Promise<void> {
    return this.run(() => this.tx.executeMultiple(sql))
  }

  commit(): Promise<void> {
    return this.run(() => this.tx.commit())
  }

  async rollback(): Promise<void> {
    try {
      await this.tx.rollback()
    } catch (error) {
      if (!isUnavailable(error) && !/no transaction is active/.test(String((error as Error)?.message))) throw error
    }
  }

  close(): void {
    this.tx.close()
  }
}
