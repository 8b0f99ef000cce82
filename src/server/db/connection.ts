/**
 * One SQLite connection as Plaza uses it, on the main thread (the write client) or in a reader
 * worker: opened with the same pragmas every time, and with its prepared statements kept by SQL
 * text. This module loads nothing but `libsql`, so a reader worker starts quickly.
 */
import Database from 'libsql'

export type Connection = InstanceType<typeof Database>
export type Statement = ReturnType<Connection['prepare']>

/** How long a connection waits for another process's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000

/**
 * Set on every connection when it opens. `synchronous` and `foreign_keys` are per connection and
 * silently ignored inside a transaction, which is why they are set here and not on a borrowed one.
 * NORMAL is durable in WAL mode except for the last commits before a power loss.
 */
const CONNECTION_PRAGMAS = [
  'PRAGMA synchronous = NORMAL',
  'PRAGMA foreign_keys = ON',
  `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`,
  // 32 MB of page cache (negative: KiB) and temp b-trees in memory. No memory-mapping: on the
  // 1M-post network a session lookup right after another connection's commit takes 44 µs without
  // it against 119-139 µs with 256 MiB or 2 GiB mapped (bench/read-after-write.ts), and a server
  // reads right after writes all the time.
  'PRAGMA cache_size = -32000',
  'PRAGMA mmap_size = 0',
  'PRAGMA temp_store = MEMORY',
  // A WAL rewound to its beginning is cut back to this size (the checkpointer, checkpointer.ts, rewinds it).
  'PRAGMA journal_size_limit = 67108864',
]

/** Opens a connection to a local database file with Plaza's pragmas; `readOnly` sets `query_only` (reader workers). */
export function openConnection(file: string, { readOnly = false } = {}): Connection {
  const connection = new Database(file, { timeout: BUSY_TIMEOUT_MS })
  try {
    for (const pragma of CONNECTION_PRAGMAS) connection.exec(pragma)
    if (readOnly) connection.exec('PRAGMA query_only = ON')
  } catch (error) {
    connection.close()
    throw error
  }
  return connection
}

/**
 * Statements prepared once per connection and reused by SQL text: drizzle renders the same text
 * for the same query shape, so the steady state prepares nothing. Bounded because some shapes
 * (an `IN` list of varying length) render a new text per length; the least recently used goes.
 */
export class StatementCache {
  readonly #statements = new Map<string, Statement>()

  constructor(
    private readonly connection: Connection,
    private readonly capacity = 500,
  ) {}

  get(sql: string): Statement {
    let statement = this.#statements.get(sql)
    if (statement) {
      this.#statements.delete(sql)
    } else {
      statement = this.connection.prepare(sql)
      if (this.#statements.size >= this.capacity) this.#statements.delete(this.#statements.keys().next().value!)
    }
    this.#statements.set(sql, statement)
    return statement
  }

  get size(): number {
    return this.#statements.size
  }
}

/** A value as SQLite binds it: the same conversions as @libsql/client (booleans as 0/1, dates as epoch ms). */
export function toSqlValue(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof Date) return value.getTime()
  if (value instanceof ArrayBuffer) return Buffer.from(value)
  if (value === undefined) throw new TypeError('undefined cannot be passed as argument to the database')
  return value
}

/** SQLite's primary result code for an extended one (`SQLITE_CONSTRAINT_UNIQUE` → `SQLITE_CONSTRAINT`), as LibsqlError.code carries. */
export function primaryCode(extended: string | undefined): string {
  return extended ? extended.split('_').slice(0, 2).join('_') : 'SQLITE_UNKNOWN'
}
