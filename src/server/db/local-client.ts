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
 *
 * **Group commit.** Write transactions that queue behind one another in this process share one
 * SQLite transaction: each runs inside a savepoint of it, and the group commits once the queue is
 * empty (or after GROUP_MAX_MS, GROUP_MAX_MEMBERS); a group begins after the turn of the event
 * loop that asked for it, so the writes of all the requests read in that turn join it. A
 * member's `commit()` resolves only when its group's COMMIT has succeeded, so nothing is answered
 * before it is durable as before; a member that fails rolls back to its savepoint and leaves the
 * others be. What it saves: the WAL gets each page a group touches once, not once per transaction
 * (a table's last page, a counter's row, FTS5's new segment), and the processes of `plaza serve
 * --workers N` pass SQLite's write lock between them once per group rather than once per
 * transaction, each handover costing a retry from a timer (`whenUnlocked`) during which the
 * waiting process serves reads only.
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
import { openConnection, primaryCode, StatementCache, toSqlValue, type Connection, type Statement } from './connection.js'

interface Lane {
  connection: Connection
  statements: StatementCache
  /** A statement left in progress by a refusal (see the top of this file): close it, never reuse it. */
  stuck?: boolean
}

const BEGIN: Record<TransactionMode, string> = { write: 'BEGIN IMMEDIATE', read: 'BEGIN TRANSACTION READONLY', deferred: 'BEGIN DEFERRED' }

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY (the readers' busy timeout). */
const LOCK_WAIT_MS = 5000

/**
 * A group of write transactions stops taking new members after this long or this many, so that
 * another process waiting for the write lock gets it, and the first member's answer waits little.
 */
export const GROUP_MAX_MS = 8
export const GROUP_MAX_MEMBERS = 64

/** Each member of a group runs inside this savepoint (drizzle's nested transactions use `sp0`, `sp1`...). */
const MEMBER = 'plaza_member'

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

/**
 * What a statement that returns rows returns, described once per prepared statement: libsql's
 * `columns()` costs about 15 µs a call (a follow's RETURNING, 11 columns, spent more on it than on
 * its update), and toggling `raw` and asking `reader` cross into the binding as well. A prepared
 * statement keeps its result columns: SQLite re-prepares it after a schema change, and Plaza's
 * statements name their columns (never `*`).
 */
interface Shape {
  columns: string[]
  types: string[]
  /** Builds rows of these columns (`toRow`'s prototype). */
  row: object
  /** A row's enumerable properties, each with the index of its value (libsqlRow's, for odd names too). */
  named: Array<[string, number]>
  /** No name is `__proto__` or one the prototype has (an index, `constructor`...), so the names can be assigned rather than defined. */
  assignable: boolean
}

const shapes = new WeakMap<Statement, Shape | null>()

/** The statement's shape, or null for one that returns no rows; sets raw mode, which stays set. */
function shapeOf(statement: Statement): Shape | null {
  let shape = shapes.get(statement)
  if (shape !== undefined) return shape
  shape = null
  if (statement.reader) {
    statement.raw(true)
    const described = statement.columns()
    const columns = described.map((column) => column.name)
    const row = Object.create(Object.prototype, { length: { get: valuesLength } })
    for (let i = 0; i < columns.length; i++) Object.defineProperty(row, i, { get: valueAt(i) })
    // Which names a row has, and the value of each, as @libsql/client's way of building a row leaves them.
    const named = Object.entries(libsqlRow(columns.map((_, i) => i), columns)) as Array<[string, number]>
    // A name the prototype has (an index's getter, or Object.prototype's) or `__proto__` is defined, not assigned.
    const assignable = named.every(([name]) => name !== '__proto__' && !(name in row))
    shape = { columns, types: described.map((column) => column.type ?? ''), row, named, assignable }
  }
  shapes.set(statement, shape)
  return shape
}

/** How @libsql/client builds a row: values by index (not enumerable), and by column name (enumerable), the first of a name winning. */
function libsqlRow(values: unknown[], columns: string[]): Record<string, unknown> {
  const row = {}
  Object.defineProperty(row, 'length', { value: values.length })
  for (let i = 0; i < values.length; i++) {
    Object.defineProperty(row, i, { value: values[i] })
    if (!Object.hasOwn(row, columns[i])) Object.defineProperty(row, columns[i], { value: values[i], enumerable: true, configurable: true, writable: true })
  }
  return row
}

const VALUES = Symbol('values')
type Values = { [VALUES]: unknown[] }

function valuesLength(this: Values): number {
  return this[VALUES].length
}

function valueAt(i: number) {
  return function (this: Values): unknown {
    return this[VALUES][i]
  }
}

/**
 * A row as @libsql/client shapes it (libsqlRow): values by index (not enumerable; here getters on
 * the shape's prototype) and by column name (enumerable own properties, the first of a name wins).
 */
function toRow(values: unknown[], shape: Shape): Row {
  const row = Object.create(shape.row) as Record<string | symbol, unknown>
  row[VALUES] = values
  if (shape.assignable) for (const [name, i] of shape.named) row[name] = values[i]
  else for (const [name, i] of shape.named) Object.defineProperty(row, name, { value: values[i], enumerable: true, configurable: true, writable: true })
  return row as unknown as Row
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
  const shape = shapeOf(statement)
  if (shape) {
    const rows = (statement.all(bindings(args)) as unknown[][]).map((values) => toRow(values, shape))
    return resultSet(shape.columns, shape.types, rows, 0, undefined)
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

/** A member's wait for its group's COMMIT. */
interface Waiter {
  resolve: () => void
  reject: (error: unknown) => void
}

/** Write transactions sharing one SQLite transaction (see the top of this file). */
interface Group {
  /** The connection holding the SQLite transaction. */
  lane: Lane
  openedAt: number
  members: number
  /** Members that released their savepoint: settled by the group's COMMIT. */
  committed: Waiter[]
  /** Set once the group has committed or failed: a member still running can do nothing more. */
  over: boolean
}

export interface LocalClientOptions {
  /** How long a write waits for another process's lock before failing with SQLITE_BUSY. */
  lockWaitMs?: number
  /** `false`: commits never checkpoint (a checkpointer does, checkpointer.ts). */
  autoCheckpoint?: boolean
  /** `false`: every write transaction commits on its own (see "Group commit" above). */
  groupCommit?: boolean
  /** How long a group takes new members (GROUP_MAX_MS); tests that hold a group open give `Infinity`. */
  groupMaxMs?: number
}

export class LocalClient implements Client {
  closed = false
  readonly protocol = 'file'
  readonly #idle: Lane[] = []
  readonly #open = new Set<Lane>()
  /** Settles when the current transaction (batch, migration) does; the next one chains on it. */
  #turn: Promise<void> = Promise.resolve()
  /** Callers waiting for their turn: a group stays open for them. */
  #queued = 0
  #group: Group | null = null

  readonly #lockWaitMs: number
  readonly #autoCheckpoint: boolean
  readonly #groupCommit: boolean
  readonly #groupMaxMs: number

  constructor(
    private readonly file: string,
    { lockWaitMs = LOCK_WAIT_MS, autoCheckpoint = true, groupCommit = true, groupMaxMs = GROUP_MAX_MS }: LocalClientOptions = {},
  ) {
    this.#lockWaitMs = lockWaitMs
    this.#autoCheckpoint = autoCheckpoint
    this.#groupCommit = groupCommit
    this.#groupMaxMs = groupMaxMs
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
    const end = await this.#waitTurnAlone()
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
    if (mode === 'write' && this.#groupCommit) return this.#join(await this.#waitTurn())
    const end = await this.#waitTurnAlone()
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
    if (this.#group) this.fail(this.#group, clientClosed())
    this.closed = true
    for (const lane of this.#open) if (lane.connection.open) lane.connection.close()
    this.#open.clear()
    this.#idle.length = 0
  }

  /** Runs `fn` in a transaction begun with `begin` on a connection of its own, once no transaction of this client is open. */
  async #takingTurn<T>(begin: string, fn: (lane: Lane) => T): Promise<T> {
    const end = await this.#waitTurnAlone()
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

  /** Waits until no transaction of this client runs; the returned function ends this one's turn. */
  async #waitTurn(): Promise<() => void> {
    let end!: () => void
    const previous = this.#turn
    this.#turn = new Promise((resolve) => (end = resolve))
    this.#queued++
    await previous
    this.#queued--
    return end
  }

  /** A turn outside any group: the open group (whose members are all done) commits first. */
  async #waitTurnAlone(): Promise<() => void> {
    const end = await this.#waitTurn()
    if (this.#group) this.#commit(this.#group)
    return end
  }

  /** Runs a write transaction as a member of the open group, or of a new one. */
  async #join(end: () => void): Promise<Transaction> {
    try {
      let group = this.#group
      if (!group) {
        // The writes of the other requests this turn of the event loop read join this group rather
        // than each starting one: the group begins once those requests' handlers have run.
        await new Promise((resolve) => setImmediate(resolve))
        const lane = await this.#begin(BEGIN.write)
        group = this.#group = { lane, openedAt: performance.now(), members: 0, committed: [], over: false }
      }
      try {
        run(group.lane, `SAVEPOINT ${MEMBER}`)
      } catch (error) {
        this.fail(group, error)
        throw error
      }
      group.members++
      return new GroupMember(this, group, end)
    } catch (error) {
      end()
      throw error
    }
  }

  /**
   * A member is done (committed its savepoint or rolled it back): the group commits now unless
   * more transactions wait for the turn and the group has room for them, then the turn passes on.
   */
  leave(group: Group, end: () => void): void {
    const room = group.members < GROUP_MAX_MEMBERS && performance.now() - group.openedAt < this.#groupMaxMs
    if (!group.over && !(this.#queued > 0 && room)) this.#commit(group)
    end()
  }

  /** Commits the group and settles its members' commits. */
  #commit(group: Group): void {
    if (group.over) return
    try {
      run(group.lane, 'COMMIT')
    } catch (error) {
      this.fail(group, error)
      return
    }
    this.#end(group)
    for (const waiter of group.committed) waiter.resolve()
  }

  /** The group's transaction is lost (a failed COMMIT, SQLite rolled it back, the client closed): its members' commits fail. */
  fail(group: Group, error: unknown): void {
    if (group.over) return
    this.#end(group)
    for (const waiter of group.committed) waiter.reject(error)
  }

  /** Gives the group's connection back (its release rolls back what was not committed). */
  #end(group: Group): void {
    group.over = true
    if (this.#group === group) this.#group = null
    this.#release(group.lane)
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

/** What both kinds of transaction below run their statements on: the connection `active()` gives, or why none. */
abstract class LaneStatements {
  protected abstract active(): Lane

  async execute(stmt: InStatement): Promise<ResultSet> {
    return run(this.active(), stmt)
  }

  async batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return runBatch(this.active(), stmts)
  }

  async executeMultiple(sql: string): Promise<void> {
    try {
      this.active().connection.exec(sql)
    } catch (error) {
      throw toError(error)
    }
  }
}

/** A transaction on one connection; every way out (commit, rollback, close) returns the connection once. */
class LocalTransaction extends LaneStatements implements Transaction {
  #lane: Lane | null

  constructor(
    lane: Lane,
    private readonly settle: () => void,
  ) {
    super()
    this.#lane = lane
  }

  get closed(): boolean {
    const lane = this.#lane
    return lane === null || !lane.connection.open || !lane.connection.inTransaction
  }

  async commit(): Promise<void> {
    try {
      run(this.active(), 'COMMIT')
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

  protected active(): Lane {
    if (this.closed) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED')
    return this.#lane!
  }
}

/** The group's transaction is gone from under a member: SQLite rolled it back after an error. */
function groupLost(): LibsqlError {
  return new LibsqlError('The transaction was rolled back by an earlier error', 'TRANSACTION_CLOSED')
}

/**
 * A write transaction inside a group (see the top of this file): a savepoint of the group's
 * transaction. Its commit releases the savepoint and resolves once the group has committed.
 */
class GroupMember extends LaneStatements implements Transaction {
  #done = false

  constructor(
    private readonly client: LocalClient,
    private readonly group: Group,
    private readonly end: () => void,
  ) {
    super()
  }

  get closed(): boolean {
    return this.#done || this.group.over || !this.group.lane.connection.inTransaction
  }

  async commit(): Promise<void> {
    const lane = this.active()
    let committed: Promise<void>
    try {
      run(lane, `RELEASE ${MEMBER}`)
      committed = new Promise((resolve, reject) => this.group.committed.push({ resolve, reject }))
    } catch (error) {
      this.close()
      throw error
    }
    this.#leave()
    return committed
  }

  async rollback(): Promise<void> {
    this.close()
  }

  /** Ends the member: what it wrote since its savepoint is rolled back unless it committed. */
  close(): void {
    if (this.#done) return
    if (!this.group.over) {
      const lane = this.group.lane
      try {
        if (!lane.connection.inTransaction) throw groupLost()
        run(lane, `ROLLBACK TO ${MEMBER}`)
        run(lane, `RELEASE ${MEMBER}`)
      } catch (error) {
        this.client.fail(this.group, error)
      }
    }
    this.#leave()
  }

  #leave(): void {
    this.#done = true
    this.client.leave(this.group, this.end)
  }

  protected active(): Lane {
    if (this.#done || this.group.over) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED')
    if (!this.group.lane.connection.inTransaction) throw groupLost()
    return this.group.lane
  }
}
