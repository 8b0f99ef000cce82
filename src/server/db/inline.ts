/**
 * Reads on the event loop's own thread, for the queries whose cost does not grow with the data:
 * primary-key and index-range lookups of a page or less (a session, a profile, a feed page's rows).
 * One read-only connection (`query_only`) to the WAL file, its statements cached by SQL text, behind
 * a synchronous drizzle database: such a read takes tens of microseconds, less than handing it to
 * a worker thread and back would. Queries that scan (search, ranking, deep pages) go to the reader
 * pool instead (readers.ts), so nothing waits behind them.
 *
 * WAL gives each read a snapshot of everything committed before it started, as on the workers.
 */
import { createTableRelationsHelpers, extractTablesRelationalConfig } from 'drizzle-orm'
import { BetterSQLiteSession } from 'drizzle-orm/better-sqlite3/session'
import { BaseSQLiteDatabase, SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import { openConnection, StatementCache, type Connection } from './connection.js'
import * as schema from './schema.js'

export type InlineDb = BaseSQLiteDatabase<'sync', unknown, typeof schema>

/** What drizzle's better-sqlite3 session uses of its client: `prepare`, here from the statement cache. */
class CachedConnection {
  readonly #statements: StatementCache

  constructor(readonly connection: Connection) {
    this.#statements = new StatementCache(connection)
  }

  prepare(sql: string) {
    return this.#statements.get(sql)
  }
}

export interface InlineReads {
  db: InlineDb
  close(): void
}

/**
 * A synchronous drizzle database over one read-only connection. Built from drizzle's
 * better-sqlite3 session (`libsql` has the same synchronous API), without its driver module,
 * which would load the better-sqlite3 package.
 */
export function openInlineReads(file: string): InlineReads {
  const connection = openConnection(file, { readOnly: true })
  const dialect = new SQLiteSyncDialect()
  const tables = extractTablesRelationalConfig(schema, createTableRelationsHelpers)
  const relational = { fullSchema: schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap }
  const session = new BetterSQLiteSession(new CachedConnection(connection) as never, dialect, relational, {})
  const db = new BaseSQLiteDatabase('sync', dialect, session as never, relational) as InlineDb
  return {
    db,
    close: () => {
      if (connection.open) connection.close()
    },
  }
}
