/**
 * A loopback server speaking libsql's Hrana-over-HTTP protocol, version 2 with JSON bodies (what
 * `@libsql/client` sends for an `http://` or `libsql://…?tls=0` URL: `POST /v2/pipeline`), on a
 * SQLite file of its own, for the tests that run Plaza against a remote database as sqld / Turso
 * would serve it. Like the fake model providers it is written for the tests, and it speaks the
 * real protocol: a pipeline of stream requests (`execute`, `batch` with its step conditions,
 * `sequence`, `describe`, `store_sql`, `close_sql`, `get_autocommit`, `close`), values typed as
 * Hrana types them (a JavaScript number arrives as a `float`, a bigint as an `integer`), and a
 * baton that ties the requests of an interactive transaction to one stream, that is one SQLite
 * connection here, as in sqld.
 *
 * Each stream has its own connection to the WAL file (foreign keys on, as libsql-server sets
 * them), so reads run beside a writer on their snapshot. Writers take turns through one lock held
 * by a stream from its first write until it is back in autocommit (sqld's write lock): a
 * statement that writes waits for it asynchronously, up to `lockWaitMs`, then fails with
 * SQLITE_BUSY ("database is locked"). A stream idle for `streamIdleMs` is closed (its transaction rolled
 * back), as sqld expires streams whose client went away.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'libsql'

type Connection = InstanceType<typeof Database>
type Statement = ReturnType<Connection['prepare']>

/** A Hrana value as JSON carries it. */
type HranaValue =
  | { type: 'null' }
  | { type: 'integer'; value: string }
  | { type: 'float'; value: number }
  | { type: 'text'; value: string }
  | { type: 'blob'; base64: string }

interface HranaStmt {
  sql?: string
  sql_id?: number
  args?: HranaValue[]
  named_args?: Array<{ name: string; value: HranaValue }>
  want_rows?: boolean
}

type BatchCond =
  | { type: 'ok'; step: number }
  | { type: 'error'; step: number }
  | { type: 'not'; cond: BatchCond }
  | { type: 'and'; conds: BatchCond[] }
  | { type: 'or'; conds: BatchCond[] }
  | { type: 'is_autocommit' }

interface StmtResult {
  cols: Array<{ name: string | null; decltype: string | null }>
  rows: HranaValue[][]
  affected_row_count: number
  last_insert_rowid: string | null
}

interface HranaError {
  message: string
  code?: string
}

export interface HranaServerOptions {
  /** The SQLite file to serve (default: `db.sqlite` in a fresh temp directory, removed at close). */
  file?: string
  /** Require `Authorization: Bearer <authToken>` (as Turso and sqld with JWT auth do). */
  authToken?: string
  /**
   * How long a write waits for another stream's write lock before SQLITE_BUSY (default 30 s: a
   * loaded test machine with a hundred writers queued, each transaction a few HTTP round trips, needs
   * seconds; what Plaza does past the wait is tested with a short one).
   */
  lockWaitMs?: number
  /** How long a stream may sit unused before it is closed and its transaction rolled back (default 15 s). */
  streamIdleMs?: number
  /** Off: connections do not enforce foreign keys (a server configured unlike libsql-server). */
  foreignKeys?: boolean
  /** A server built without FTS5: SQLite's own "no such module: fts5" for every statement that uses it. */
  withoutFts5?: boolean
}

export interface HranaServer {
  /** `http://127.0.0.1:PORT`: what PLAZA_DATABASE_URL is set to. */
  url: string
  file: string
  /** Pipeline requests answered so far (every database round trip of a client). */
  readonly pipelines: number
  /** Streams open now (an interactive transaction holds one between its requests). */
  readonly openStreams: number
  close(): Promise<void>
}

/** The most a pipeline body may hold (a batch of migrations is the largest Plaza sends). */
const MAX_BODY_BYTES = 16 * 1024 * 1024

class ProtocolError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** A statement's failure as Hrana reports it: SQLite's message, and its primary result code as sqld gives it. */
class SqlError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

function toSqlError(error: unknown): SqlError {
  if (error instanceof SqlError) return error
  const { message, code } = error as { message?: string; code?: string }
  const primary = typeof code === 'string' && code.startsWith('SQLITE_') ? code.split('_').slice(0, 2).join('_') : 'SQLITE_ERROR'
  return new SqlError(String(message ?? error), primary)
}

/**
 * Statements that never write the database file, so they need no write lock: reads, and the
 * statements that open (deferred or read-only) or end a transaction. Everything else (writes,
 * DDL, pragmas, BEGIN IMMEDIATE) takes the lock; taking it for a statement that turns out not to
 * write only costs a turn.
 */
function writes(sql: string): boolean {
  const text = sql.replace(/^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '')
  if (/^(?:SELECT|EXPLAIN|VALUES)\b/i.test(text)) return false
  if (/^WITH\b/i.test(text)) return /\b(?:INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text)
  if (/^(?:COMMIT|END|ROLLBACK|RELEASE|SAVEPOINT)\b/i.test(text)) return false
  return !/^BEGIN(?:\s+DEFERRED)?(?:\s+TRANSACTION)?(?:\s+READONLY)?\s*;?\s*$/i.test(text)
}

function decodeValue(value: HranaValue): unknown {
  switch (value?.type) {
    case 'null':
      return null
    case 'integer':
      return BigInt(value.value)
    case 'float':
      return Number(value.value)
    case 'text':
      return String(value.value)
    case 'blob':
      return Buffer.from(value.base64, 'base64')
    default:
      throw new ProtocolError(400, `unknown value type ${JSON.stringify((value as { type?: unknown })?.type)}`)
  }
}

function encodeValue(value: unknown): HranaValue {
  if (value === null || value === undefined) return { type: 'null' }
  if (typeof value === 'bigint') return { type: 'integer', value: value.toString() }
  // Read with safeIntegers: SQLite integers are bigints here, so a number is a REAL.
  if (typeof value === 'number') return { type: 'float', value }
  if (typeof value === 'string') return { type: 'text', value }
  if (value instanceof Uint8Array) return { type: 'blob', base64: Buffer.from(value).toString('base64') }
  throw new Error(`cannot encode ${typeof value}`)
}

/** One stream: a connection, its stored SQL texts, and a few statements cached by SQL text. */
class Stream {
  readonly sqls = new Map<number, string>()
  readonly #statements = new Map<string, Statement>()
  baton: string | null = null
  idleTimer: NodeJS.Timeout | null = null
  closed = false

  constructor(readonly connection: Connection) {}

  get inTransaction(): boolean {
    return this.connection.inTransaction
  }

  statement(sql: string): Statement {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.connection.prepare(sql)
      if (this.#statements.size >= 100) this.#statements.delete(this.#statements.keys().next().value!)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  /** A statement that failed is prepared afresh next time (the libsql binding does not reset a failed one). */
  forget(sql: string) {
    this.#statements.delete(sql)
  }
}

/** sqld's write lock: one stream writes at a time, from its first write until its transaction ends. */
class WriteLock {
  #holder: Stream | null = null
  readonly #waiting: Array<{ stream: Stream; granted: () => void }> = []

  constructor(private readonly waitMs: number) {}

  async acquire(stream: Stream): Promise<void> {
    if (this.#holder === null || this.#holder === stream) {
      this.#holder = stream
      return
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        stream,
        granted: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1)
        reject(new SqlError('database is locked', 'SQLITE_BUSY'))
      }, this.waitMs)
      this.#waiting.push(waiter)
    })
  }

  /** Ends `stream`'s turn once it is back in autocommit (or closed). */
  settle(stream: Stream) {
    if (this.#holder !== stream || (!stream.closed && stream.inTransaction)) return
    const next = this.#waiting.shift()
    this.#holder = next?.stream ?? null
    next?.granted()
  }
}

export async function startHranaServer(options: HranaServerOptions = {}): Promise<HranaServer> {
  const ownDir = options.file ? null : mkdtempSync(path.join(tmpdir(), 'plaza-hrana-'))
  const file = options.file ?? path.join(ownDir!, 'db.sqlite')
  const lock = new WriteLock(options.lockWaitMs ?? 30_000)
  const streamIdleMs = options.streamIdleMs ?? 15_000
  const streams = new Map<string, Stream>()
  const all = new Set<Stream>()
  let pipelines = 0

  const setup = new Database(file)
  setup.exec('PRAGMA journal_mode = WAL')
  setup.close()

  function openStream(): Stream {
    const connection = new Database(file)
    // Waits for the lock happen in WriteLock, never in SQLite's busy handler (which would stop this event loop).
    connection.exec('PRAGMA busy_timeout = 0')
    connection.exec(`PRAGMA foreign_keys = ${options.foreignKeys === false ? 'OFF' : 'ON'}`)
    const stream = new Stream(connection)
    all.add(stream)
    return stream
  }

  function closeStream(stream: Stream) {
    if (stream.closed) return
    stream.closed = true
    if (stream.idleTimer) clearTimeout(stream.idleTimer)
    if (stream.baton) streams.delete(stream.baton)
    all.delete(stream)
    try {
      if (stream.connection.inTransaction) stream.connection.exec('ROLLBACK')
    } catch {
      // closing ends it anyway
    }
    stream.connection.close()
    lock.settle(stream)
  }

  function sqlOf(stream: Stream, stmt: { sql?: string; sql_id?: number }): string {
    if (typeof stmt.sql === 'string') return stmt.sql
    const stored = stmt.sql_id === undefined ? undefined : stream.sqls.get(stmt.sql_id)
    if (stored === undefined) throw new ProtocolError(400, `no SQL text with id ${stmt.sql_id}`)
    return stored
  }

  function bindings(stmt: HranaStmt): unknown[] | Record<string, unknown> {
    if (stmt.named_args?.length) {
      const named: Record<string, unknown> = {}
      for (const { name, value } of stmt.named_args) named[/^[:@$]/.test(name) ? name.slice(1) : name] = decodeValue(value)
      for (const [i, value] of (stmt.args ?? []).entries()) named[i + 1] = decodeValue(value)
      return named
    }
    return (stmt.args ?? []).map(decodeValue)
  }

  /** Runs one statement, taking the write lock first when it may write. */
  async function execute(stream: Stream, stmt: HranaStmt): Promise<StmtResult> {
    const sql = sqlOf(stream, stmt)
    if (options.withoutFts5 && /\bUSING\s+fts5\b/i.test(sql)) throw new SqlError('no such module: fts5', 'SQLITE_ERROR')
    const writing = writes(sql)
    if (writing) await lock.acquire(stream)
    try {
      const statement = stream.statement(sql)
      const args = bindings(stmt)
      if (statement.reader) {
        const columns = statement.columns()
        const rows = (statement.raw(true).safeIntegers(true).all(args) as unknown[][]).map((row) => row.map(encodeValue))
        let affected = 0
        let lastRowid: string | null = null
        if (writing) {
          // INSERT … RETURNING and the like: what they changed, as sqld reports it.
          const [changes, rowid] = stream.connection.prepare('SELECT changes(), last_insert_rowid()').raw(true).safeIntegers(true).get() as [bigint, bigint]
          affected = Number(changes)
          lastRowid = rowid.toString()
        }
        return {
          cols: columns.map((column) => ({ name: column.name, decltype: column.type ?? null })),
          rows: stmt.want_rows === false ? [] : rows,
          affected_row_count: affected,
          last_insert_rowid: lastRowid,
        }
      }
      const info = statement.run(args)
      return { cols: [], rows: [], affected_row_count: Number(info.changes), last_insert_rowid: String(info.lastInsertRowid) }
    } catch (error) {
      stream.forget(sql)
      throw toSqlError(error)
    } finally {
      // After any statement, not only a write: a COMMIT or ROLLBACK ends the turn its transaction's first write began.
      lock.settle(stream)
    }
  }

  async function batch(stream: Stream, steps: Array<{ condition?: BatchCond; stmt: HranaStmt }>) {
    const results: Array<StmtResult | null> = []
    const errors: Array<HranaError | null> = []
    const holds = (cond: BatchCond): boolean => {
      switch (cond.type) {
        case 'ok':
          return results[cond.step] != null
        case 'error':
          return errors[cond.step] != null
        case 'not':
          return !holds(cond.cond)
        case 'and':
          return cond.conds.every(holds)
        case 'or':
          return cond.conds.some(holds)
        case 'is_autocommit':
          return !stream.inTransaction
        default:
          throw new ProtocolError(400, `unknown batch condition ${JSON.stringify((cond as { type?: unknown }).type)}`)
      }
    }
    for (const step of steps) {
      if (step.condition && !holds(step.condition)) {
        results.push(null)
        errors.push(null)
        continue
      }
      try {
        results.push(await execute(stream, step.stmt))
        errors.push(null)
      } catch (error) {
        if (error instanceof ProtocolError) throw error
        const failure = toSqlError(error)
        results.push(null)
        errors.push({ message: failure.message, code: failure.code })
      }
    }
    return { step_results: results, step_errors: errors }
  }

  async function handle(stream: Stream, request: any): Promise<object> {
    switch (request?.type) {
      case 'execute':
        return { type: 'execute', result: await execute(stream, request.stmt) }
      case 'batch':
        return { type: 'batch', result: await batch(stream, request.batch?.steps ?? []) }
      case 'sequence': {
        const sql = sqlOf(stream, request)
        await lock.acquire(stream)
        try {
          stream.connection.exec(sql)
        } catch (error) {
          throw toSqlError(error)
        } finally {
          lock.settle(stream)
        }
        return { type: 'sequence' }
      }
      case 'describe': {
        const sql = sqlOf(stream, request)
        let statement: Statement
        try {
          statement = stream.connection.prepare(sql)
        } catch (error) {
          throw toSqlError(error)
        }
        const cols = statement.reader ? statement.columns().map((column) => ({ name: column.name, decltype: column.type ?? null })) : []
        return { type: 'describe', result: { params: [], cols, is_explain: /^\s*EXPLAIN\b/i.test(sql), is_readonly: !writes(sql) } }
      }
      case 'store_sql':
        stream.sqls.set(request.sql_id, String(request.sql))
        return { type: 'store_sql' }
      case 'close_sql':
        stream.sqls.delete(request.sql_id)
        return { type: 'close_sql' }
      case 'get_autocommit':
        return { type: 'get_autocommit', is_autocommit: !stream.inTransaction }
      case 'close':
        closeStream(stream)
        return { type: 'close' }
      default:
        throw new ProtocolError(400, `unknown stream request type ${JSON.stringify(request?.type)}`)
    }
  }

  async function pipeline(body: any) {
    if (!body || typeof body !== 'object' || !Array.isArray(body.requests)) throw new ProtocolError(400, 'a pipeline body is {"baton", "requests": [...]}')
    let stream: Stream
    if (body.baton == null) stream = openStream()
    else {
      const found = streams.get(String(body.baton))
      if (!found) throw new ProtocolError(400, 'the baton is not valid (the stream has ended or expired)')
      stream = found
      streams.delete(found.baton!)
      if (found.idleTimer) clearTimeout(found.idleTimer)
    }
    stream.baton = null
    const results: object[] = []
    for (const request of body.requests) {
      if (stream.closed) {
        results.push({ type: 'error', error: { message: 'the stream is closed', code: 'STREAM_CLOSED' } })
        continue
      }
      try {
        results.push({ type: 'ok', response: await handle(stream, request) })
      } catch (error) {
        if (error instanceof ProtocolError) {
          closeStream(stream)
          throw error
        }
        const failure = toSqlError(error)
        results.push({ type: 'error', error: { message: failure.message, code: failure.code } })
      }
    }
    if (!stream.closed) {
      stream.baton = `${randomBytes(16).toString('hex')}`
      streams.set(stream.baton, stream)
      stream.idleTimer = setTimeout(() => closeStream(stream), streamIdleMs).unref()
    }
    return { baton: stream.baton, base_url: null, results }
  }

  function readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let size = 0
      req.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_BODY_BYTES) {
          reject(new ProtocolError(413, `a pipeline body may hold at most ${MAX_BODY_BYTES} bytes`))
          req.destroy()
        } else chunks.push(chunk)
      })
      req.on('end', () => resolve(Buffer.concat(chunks)))
      req.on('error', reject)
    })
  }

  function reply(res: ServerResponse, status: number, body: unknown) {
    if (res.headersSent || res.destroyed) return
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' })
    res.end(text)
  }

  const server = http.createServer(async (req, res) => {
    try {
      const route = new URL(req.url ?? '/', 'http://localhost').pathname
      if (options.authToken !== undefined && req.headers.authorization !== `Bearer ${options.authToken}`) {
        return reply(res, 401, 'Unauthorized: a valid auth token is required')
      }
      if (req.method === 'GET' && (route === '/v2' || route === '/health')) return reply(res, 200, 'ok')
      if (req.method === 'POST' && route === '/v2/pipeline') {
        const raw = await readBody(req)
        let body: unknown
        try {
          body = JSON.parse(raw.toString('utf8'))
        } catch {
          throw new ProtocolError(400, 'the pipeline body is not JSON')
        }
        pipelines++
        return reply(res, 200, await pipeline(body))
      }
      reply(res, 404, `no route ${req.method} ${route} (this server speaks Hrana 2 over HTTP: POST /v2/pipeline)`)
    } catch (error) {
      if (error instanceof ProtocolError) reply(res, error.status, { message: error.message })
      else reply(res, 500, { message: String((error as Error)?.message ?? error) })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    file,
    get pipelines() {
      return pipelines
    },
    get openStreams() {
      return all.size
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      for (const stream of [...all]) closeStream(stream)
      if (ownDir) rmSync(ownDir, { recursive: true, force: true })
    },
  }
}
