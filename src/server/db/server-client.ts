/**
 * The client for a libsql server (sqld, Turso) over Hrana-over-HTTP: @libsql/client's own HTTP
 * client, with what a server needs that it does not do by itself.
 *
 * - **Transactions take turns in this process** (as on a local file, local-client.ts): sqld has one
 *   write lock and an interactive transaction holds it for several round trips, so the process's
 *   transactions queue here rather than on the server, where their waits would run down the
 *   deadline below. When the server turns out to be unavailable, those waiting are failed at once
 *   instead of each trying in turn.
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
import { request as undiciRequest } from 'undici'
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
  /** Overrides REQUEST_TIMEOUT_MS (PLAZA_DATABASE_TIMEOUT). */
  requestTimeoutMs?: number
  /** Called after a write that reached `index`; the write resolves when this does. */
  afterWrite?: (index: bigint) => Promise<void>
}

const REPLICATION_INDEX = /"replication_index":"(\d+)"/g
const WROTE = /"rows_written":[1-9]/
/** A statement ending a transaction: its result's index is the transaction's. */
const ENDS_TRANSACTION = /^\s*(?:COMMIT|END)\b/i

interface PipelineRequest {
  baton?: string | null
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

/**
 * Whether the pipeline's answer carries the index of committed writes: a stream opened and closed
 * in this one pipeline (an autocommit statement, a batch with its own BEGIN and COMMIT) that wrote,
 * or an interactive transaction's COMMIT. A statement inside an open transaction has an index too,
 * but of a write that may never be committed (a rollback): not one to make reads wait for.
 */
function committedWrite(body: PipelineRequest, text: string): boolean {
  const steps = body.requests ?? []
  if (steps.some((request) => request.type === 'execute' && ENDS_TRANSACTION.test(request.stmt?.sql ?? ''))) return true
  return !body.baton && steps.some((request) => request.type === 'close') && WROTE.test(text)
}

function headersOf(request: Request): Record<string, string> {
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => (headers[name] = value))
  return headers
}

/** Our deadline passed: said by name, as AbortSignal.timeout names its own. */
class DeadlineError extends Error {
  override name = 'TimeoutError'
}

/**
 * A `fetch` for @libsql/client: the deadline, the replication index sent with each pipeline, and
 * the index of each write noted from its answer. The request goes out with undici's `request`, not
 * `fetch`: on Node 20 a `fetch` answer's body is read through a job on libuv's thread pool, which
 * password hashing (scrypt, seconds a job) can fill, and then every answer of the database waited
 * for the hashing of every sign-up in progress (16 at once held reads up for 10-20 s).
 */
function serverFetch(writes: WriteIndex, timeoutMs: number | null) {
  return async (request: Request): Promise<Response> => {
    const pipeline = request.method === 'POST' && /\/pipeline$/.test(new URL(request.url).pathname)
    let body: PipelineRequest | null = null
    let sent: string | undefined
    if (request.method !== 'GET' && request.method !== 'HEAD') sent = await request.text()
    if (pipeline && sent !== undefined) {
      body = JSON.parse(sent) as PipelineRequest
      const latest = writes.latest()
      if (latest > 0n) {
        for (const step of body.requests ?? []) {
          if (step.type === 'execute' && step.stmt) step.stmt.replication_index = String(latest)
          else if (step.type === 'batch' && step.batch) step.batch.replication_index = String(latest)
        }
        sent = JSON.stringify(body)
      }
    }
    const signal = timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs)
    let status: number
    let headers: Record<string, string | string[] | undefined>
    let text: string
    try {
      const answer = await undiciRequest(request.url, { method: request.method as 'POST', headers: headersOf(request), body: sent, signal })
      status = answer.statusCode
      headers = answer.headers
      text = await answer.body.text()
    } catch (error) {
      if (signal?.aborted) throw new DeadlineError('no answer in time', { cause: error })
      throw error
    }
    // What this host's later reads must see.
    if (body && status === 200 && committedWrite(body, text)) writes.note(largestIndex(text))
    const answerHeaders = new Headers()
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue
      for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, one)
    }
    return new Response(status === 204 || status === 304 ? null : text, { status, headers: answerHeaders })
  }
}

/** Whether `error` (or a cause of it) means the server is unavailable rather than that the statement failed. */
function isUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof DatabaseUnavailableError) return true
    const { name, code, status } = cause as { name?: string; code?: unknown; status?: unknown }
    // The deadline, or the connection refused, reset or cut.
    if (name === 'TimeoutError' || name === 'AbortError') return true
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT)$/.test(code)) return true
    // The server answered 5xx, or ended our transaction or stream for taking too long (sqld: 5 s holding the write lock).
    if (typeof status === 'number' && status >= 500) return true
    if (code === 'TRANSACTION_TIMEOUT' || code === 'STREAM_EXPIRED') return true
  }
  return false
}

function isTimeout(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if ((cause as Error).name === 'TimeoutError') return true
  }
  return false
}

const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection lost',
  UND_ERR_SOCKET: 'connection lost',
  UND_ERR_CLOSED: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
}

/** What the log (and start-up) says of an unavailable server: the cause in a few words, never the token. */
function unavailable(error: unknown, where: string): DatabaseUnavailableError {
  if (error instanceof DatabaseUnavailableError) return error
  let detail = String((error as Error)?.message ?? error)
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { name, code } = cause as { name?: string; code?: unknown }
    if (name === 'TimeoutError') {
      detail = 'no answer in time'
      break
    }
    if (typeof code === 'string' && CONNECTION_FAILURES[code]) {
      detail = `${CONNECTION_FAILURES[code]} (${code})`
      break
    }
  }
  return new DatabaseUnavailableError(where, detail, { cause: error })
}

/** The process's write transactions, one at a time (see the top of this file). */
class Turn {
  #busy = false
  readonly #queue: Array<{ resolve: () => void; reject: (error: unknown) => void }> = []

  take(): Promise<void> {
    if (!this.#busy) {
      this.#busy = true
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => this.#queue.push({ resolve, reject }))
  }

  give(): void {
    const next = this.#queue.shift()
    if (next) next.resolve()
    else this.#busy = false
  }

  /** Fails everyone waiting with `error` (the server is unavailable: they would only wait for it in turn). */
  fail(error: unknown): void {
    for (const waiting of this.#queue.splice(0)) waiting.reject(error)
  }
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
  readonly #turn = new Turn()

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
    const before = this.#writes.count
    let result: T
    try {
      result = await call()
    } catch (error) {
      if (!isUnavailable(error)) throw error
      // What it waited for may never come (a primary that crashed numbers its new log from 1): not again.
      if (isTimeout(error)) this.#writes.forget()
      throw unavailable(error, this.#where)
    }
    if (this.#afterWrite && this.#writes.count > before) await this.#afterWrite(this.#writes.last)
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
    if (mode === 'read') return new ServerTransaction(await this.#run(() => this.#client.transaction(mode)), (call) => this.#run(call), () => {})
    await this.#turn.take()
    let given = false
    const give = () => {
      if (given) return
      given = true
      this.#turn.give()
    }
    const run = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await this.#run(call)
      } catch (error) {
        if (error instanceof DatabaseUnavailableError) this.#turn.fail(error)
        throw error
      }
    }
    try {
      return new ServerTransaction(await run(() => this.#client.transaction(mode)), run, give)
    } catch (error) {
      give()
      throw error
    }
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
  /** `done`: gives the process's turn to the next transaction (once, whichever of commit, rollback or close ends it). */
  constructor(
    private readonly tx: Transaction,
    private readonly run: <T>(call: () => Promise<T>) => Promise<T>,
    private readonly done: () => void,
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

  async commit(): Promise<void> {
    await this.run(() => this.tx.commit())
    this.done()
  }

  async rollback(): Promise<void> {
    try {
      await this.tx.rollback()
    } catch (error) {
      if (!isUnavailable(error) && !/no transaction is active/.test(String((error as Error)?.message))) throw error
    } finally {
      this.done()
    }
  }

  close(): void {
    this.tx.close()
    this.done()
  }
}
