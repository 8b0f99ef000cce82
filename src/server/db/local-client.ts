/**
 * The write client for a local database file: what drizzle's libsql driver needs from a libsql
 * `Client`, over `libsql` connections opened by `openConnection` (so every connection, not only
 * the first, has Plaza's pragmas) with their statements cached by SQL text (so the steady state
 * prepares nothing). @libsql/client's own pool opens connections without any per-connection set-up
 * and prepares every statement on every call.
 *
 * Every call runs synchronously on the calling thread, as in @libsql/client. Transactions (and
 * batches, and migrations) take turns through an in-process lock: only one can hold SQLite's write
 * lock anyway, and a second BEGIN IMMEDIATE on another connection would wait for it in SQLite's
 * busy handler, which sleeps on the event loop that the first one needs to finish.
 *
 * For the same reason these connections have no busy timeout: when another process (a second
 * `plaza serve` worker, an embedded command) holds the write lock, SQLite's handler would put this
 * whole process to sleep for 1-100 ms at a time, every request with it. The write is retried from a
 * timer instead (`whenUnlocked`), and the process serves reads while it waits.
 *
 * The `libsql` binding (0.5.x) resets a statement before it runs it, never after a step fails, and
 * has no reset of its own. A statement refused with SQLITE_BUSY therefore stays in progress: it
 * pins its connection's snapshot and counts as a statement in progress, so that connection's next
 * BEGIN IMMEDIATE fails SQLITE_BUSY_SNAPSHOT for ever and its COMMITs fail ("SQL statements in
 * progress") until the garbage collector finalizes the statement (tursodatabase/libsql-client-ts#352).
 * So the only statement here that may meet another process's lock is BEGIN IMMEDIATE, which
 * `whenUnlocked` runs again (which resets it): a write outside a transaction runs inside one of its
 * own, and a connection on which any other statement was refused, or whose BEGIN was given up on,
 * is retired instead of going back to the pool.
 */
import { LibsqlError } from '@libsql/core/api'
import type {
  Client,
  InArgs,
  InStatement,
  InValue,
  ResultSet,
  Row,
  Transaction,
  TransactionMode,
} from '@libsql/client'
import { openConnection, primaryCode, StatementCache, toSqlValue, type Connection } from './connection.js'

interface Lane {
  connection: Connection
  statements: StatementCache
  /** A statement left in progress by a refusal (see the top of this file): close it, never reuse it. */
  stuck?: boolean
}

const BEGIN: Record<TransactionMode, string> = { write: 'BEGIN IMMEDIATE', read: 'BEGIN TRANSACTION READONLY', deferred: 'BEGIN DEFERRED' }

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY (the readers' busy timeout). */
const LOCK_WAIT_MS = 5000

const isBusy = (error: unknown) => error instanceof LibsqlError && error.code === 'SQLITE_BUSY'

/**
 * Statements `execute` runs as they are: reads, pragmas, and the ones that manage a transaction
 * or cannot run inside one. Any other write outside a transaction runs in one of its own.
 */
const RUNS_BARE = /^\s*(?:SELECT|WITH|VALUES|PRAGMA|EXPLAIN|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|VACUUM|ATTACH|DETACH)\b/i

/**
 * Runs `attempt` (which must change nothing when it fails with SQLITE_BUSY: one statement, or a
 * BEGIN) until another process's write lock lets it through, retrying every millisecond from a
 * timer, for at most `waitMs`.
 */
async function whenUnlocked<T>(attempt: () => T, waitMs: number): Promise<T> {
  const deadline = performance.now() + waitMs
  for (;;) {
    try {
      return attempt()
    } catch (error) {
      if (!isBusy(error) || performance.now() > deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

function toError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'SqliteError') {
    const { code, rawCode } = error as Error & { code?: string; rawCode?: number }
    return new LibsqlError(error.message, primaryCode(code), code, rawCode, error)
  }
  return error
}

function bindings(args: InArgs | undefined): unknown[] | Record<string, unknown> {
  if (args === undefined) return []
  if (Array.isArray(args)) return args.map(toSqlValue)
  const named: Record<string, unknown> = {}
  // libsql binds names without their sigil (`:id`, `@id`, `$id` are all `id`).
  for (const [name, value] of Object.entries(args)) named[/^[:@$]/.test(name) ? name.slice(1) : name] = toSqlValue(value)
  return named
}

/** A row as @libsql/client shapes it: values by index (not enumerable) and by column name (enumerable, first wins). */
function toRow(values: unknown[], columns: string[]): Row {
  const row = {} as Row
  Object.defineProperty(row, 'length', { value: values.length })
  for (let i = 0; i < values.length; i++) {
    Object.defineProperty(row, i, { value: values[i] })
    if (!Object.hasOwn(row, columns[i])) {
      Object.defineProperty(row, columns[i], { value: values[i], enumerable: true, configurable: true, writable: true })
    }
  }
  return row
}

function resultSet(columns: string[], columnTypes: string[], rows: Row[], rowsAffected: number, lastInsertRowid: bigint | undefined): ResultSet {
  return {
    columns,
    columnTypes,
    rows,
    rowsAffected,
    lastInsertRowid,
    toJSON: () => ({ columns, columnTypes, rows: rows.map((row) => Array.from(row as ArrayLike<InValue>)), rowsAffected, lastInsertRowid: lastInsertRowid?.toString() ?? null }),
  }
}

function run(lane: Lane, stmt: InStatement): ResultSet {
  const { sql, args } = typeof stmt === 'string' ? { sql: stmt, args: undefined } : stmt
  try {
    return step(lane, sql, args)
  } catch (error) {
    const failure = toError(error)
    // A refused BEGIN is run again by whenUnlocked, which resets it; anything else stays in progress.
    if (isBusy(failure) && sql !== BEGIN.write) lane.stuck = true
    throw failure
  }
}

function step(lane: Lane, sql: string, args: InArgs | undefined): ResultSet {
  const statement = lane.statements.get(sql)
  if (statement.reader) {
    const described = statement.columns()
    const columns = described.map((column) => column.name)
    const rows = (statement.raw(true).all(bindings(args)) as unknown[][]).map((values) => toRow(values, columns))
    return resultSet(columns, described.map((column) => column.type ?? ''), rows, 0, undefined)
  }
  const info = statement.run(bindings(args))
  return resultSet([], [], [], info.changes, BigInt(info.lastInsertRowid))
}

function runBatch(lane: Lane, stmts: Array<InStatement | [string, InArgs?]>): ResultSet[] {
  return stmts.map((stmt) => run(lane, Array.isArray(stmt) ? { sql: stmt[0], args: stmt[1] } : stmt))
}

function clientClosed(): LibsqlError {
  return new LibsqlError('The client is closed', 'CLIENT_CLOSED')
}

export class LocalClient implements Client {
  closed = false
  readonly protocol = 'file'
  readonly #idle: Lane[] = []
  readonly #open = new Set<Lane>()
  /** Settles when the current transaction (batch, migration) does; the next one chains on it. */
  #turn: Promise<void> = Promise.resolve()

  readonly #lockWaitMs: number
  readonly #autoCheckpoint: boolean

  /**
   * `lockWaitMs`: how long a write waits for another process's lock before failing with SQLITE_BUSY.
   * `autoCheckpoint: false`: commits never checkpoint (a checkpointer does, checkpointer.ts).
   */
  constructor(
    private readonly file: string,
    { lockWaitMs = LOCK_WAIT_MS, autoCheckpoint = true }: { lockWaitMs?: number; autoCheckpoint?: boolean } = {},
  ) {
    this.#lockWaitMs = lockWaitMs
    this.#autoCheckpoint = autoCheckpoint
    // Open one connection now, so that a file that cannot be opened fails here rather than at the first query.
    this.#release(this.#borrow())
  }

  async execute(stmtOrSql: InStatement, args?: InArgs): Promise<ResultSet> {
    const stmt = typeof stmtOrSql === 'string' ? { sql: stmtOrSql, args } : stmtOrSql
    if (!RUNS_BARE.test(stmt.sql)) {
      // Not in the transactions' turn: as before, a write beside an open transaction waits for its lock.
      const lane = await this.#begin(BEGIN.write)
      try {
        const result = run(lane, stmt)
        run(lane, 'COMMIT')
        return result
      } finally {
        this.#release(lane)
      }
    }
    return whenUnlocked(() => {
      const lane = this.#borrow()
      try {
        return run(lane, stmt)
      } finally {
        this.#release(lane)
      }
    }, this.#lockWaitMs)
  }

  async batch(stmts: Array<InStatement | [string, InArgs?]>, mode: TransactionMode = 'deferred'): Promise<ResultSet[]> {
    return this.#takingTurn(BEGIN[mode], (lane) => {
      const results = runBatch(lane, stmts)
      run(lane, 'COMMIT')
      return results
    })
  }

  /** As @libsql/client: foreign keys off while the migrations run in one transaction. */
  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    const end = await this.#waitTurn()
    const lane = this.#borrow()
    try {
      run(lane, 'PRAGMA foreign_keys = OFF')
      try {
        await whenUnlocked(() => run(lane, BEGIN.write), this.#lockWaitMs).catch((error: unknown) => {
          if (isBusy(error)) lane.stuck = true
          throw error
        })
        const results = runBatch(lane, stmts)
        run(lane, 'COMMIT')
        return results
      } finally {
        // The pragma is a no-op inside a transaction: end a failed one first.
        if (lane.connection.inTransaction) run(lane, 'ROLLBACK')
        run(lane, 'PRAGMA foreign_keys = ON')
      }
    } finally {
      this.#release(lane)
      end()
    }
  }


  async transaction(mode: TransactionMode = 'write'): Promise<Transaction> {
    const end = await this.#waitTurn()
    let lane: Lane
    try {
      lane = await this.#begin(BEGIN[mode])
    } catch (error) {
      end()
      throw error
    }
    return new LocalTransaction(lane, () => {
      this.#release(lane)
      end()
    })
  }

  /** Runs a script of statements that may each be retried whole (pragmas, ANALYZE, optimize). */
  async executeMultiple(sql: string): Promise<void> {
    return whenUnlocked(() => {
      const lane = this.#borrow()
      try {
        lane.connection.exec(sql)
      } catch (error) {
        throw toError(error)
      } finally {
        this.#release(lane)
      }
    }, this.#lockWaitMs)
  }

  async sync(): Promise<never> {
    throw new LibsqlError('A local database file has nothing to sync', 'SYNC_NOT_SUPPORTED')
  }

  reconnect(): void {
    this.close()
    this.closed = false
  }

  close(): void {
    this.closed = true
    for (const lane of this.#open) if (lane.connection.open) lane.connection.close()
    this.#open.clear()
    this.#idle.length = 0
  }

  /** Runs `fn` in a transaction begun with `begin` on a connection of its own, once no transaction of this client is open. */
  async #takingTurn<T>(begin: string, fn: (lane: Lane) => T): Promise<T> {
    const end = await this.#waitTurn()
    try {
      const lane = await this.#begin(begin)
      try {
        return fn(lane)
      } finally {
        this.#release(lane)
      }
    } finally {
      end()
    }
  }

  /** A connection in a transaction begun with `begin`, once another process's write lock allows. */
  async #begin(begin: string): Promise<Lane> {
    const lane = this.#borrow()
    try {
      await whenUnlocked(() => run(lane, begin), this.#lockWaitMs)
      return lane
    } catch (error) {
      // Given up on: the refused BEGIN stays in progress (see the top of this file).
      if (isBusy(error)) lane.stuck = true
      this.#release(lane)
      throw error
    }
  }

  /** Waits until no transaction of this client is open; the returned function ends this one's turn. */
  async #waitTurn(): Promise<() => void> {
    let end!: () => void
    const previous = this.#turn
    this.#turn = new Promise((resolve) => (end = resolve))
    await previous
    return end
  }

  /**
   * An idle connection, or a new one. Outside transactions every call borrows and returns its
   * connection synchronously, and transactions take turns, so at most two are ever open.
   */
  #borrow(): Lane {
    if (this.closed) throw clientClosed()
    const idle = this.#idle.pop()
    if (idle) return idle
    const connection = openConnection(this.file)
    // Lock waits happen in whenUnlocked, off SQLite's sleeping busy handler (see the top of this file).
    connection.exec('PRAGMA busy_timeout = 0')
    if (!this.#autoCheckpoint) connection.exec('PRAGMA wal_autocheckpoint = 0')
    const lane = { connection, statements: new StatementCache(connection) }
    this.#open.add(lane)
    return lane
  }

  #release(lane: Lane): void {
    if (!this.#open.has(lane) || !lane.connection.open) return
    if (lane.stuck) {
      this.#retire(lane)
      return
    }
    // Never back into the pool mid-transaction (a failed batch, a script that began one), or the next borrower would inherit it.
    if (lane.connection.inTransaction) {
      try {
        lane.connection.exec('ROLLBACK')
      } catch {
        this.#retire(lane)
        return
      }
    }
    this.#idle.push(lane)
  }

  /** Closes a connection for good; a statement left in progress on it ends when the garbage collector finalizes it. */
  #retire(lane: Lane): void {
    this.#open.delete(lane)
    if (lane.connection.inTransaction) {
      try {
        lane.connection.exec('ROLLBACK')
      } catch {
        // closing ends it anyway
      }
    }
    lane.connection.close()
  }
}

/** A transaction on one connection; every way out (commit, rollback, close) returns the connection once. */
class LocalTransaction implements Transaction {
  #lane: Lane | null

  constructor(
    lane: Lane,
    private readonly settle: () => void,
  ) {
    this.#lane = lane
  }

  get closed(): boolean {
    const lane = this.#lane
    return lane === null || !lane.connection.open || !lane.connection.inTransaction
  }

  async execute(stmt: InStatement): Promise<ResultSet> {
    return run(this.#active(), stmt)
  }

  async batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return runBatch(this.#active(), stmts)
  }

  async executeMultiple(sql: string): Promise<void> {
    try {
      this.#active().connection.exec(sql)
    } catch (error) {
      throw toError(error)
    }
  }

  async commit(): Promise<void> {
    try {
      run(this.#active(), 'COMMIT')
    } finally {
      this.close()
    }
  }

  async rollback(): Promise<void> {
    this.close()
  }

  /** Ends the transaction; the connection's release rolls back whatever was not committed. */
  close(): void {
    if (this.#lane === null) return
    this.#lane = null
    this.settle()
  }

  #active(): Lane {
    if (this.closed) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED')
    return this.#lane!
  }
}
