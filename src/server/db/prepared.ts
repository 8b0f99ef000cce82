/**
 * Prepared queries: a query built once per database and run with placeholder values after that.
 * Building a drizzle query (its SQL text and parameters) costs about ten times what SQLite then
 * takes to answer a primary-key lookup, so every query on a hot path is written as
 *
 *   const sessionByHash = prepared((db) => db.select(...).where(eq(sessions.tokenHash, sql.placeholder('hash'))).prepare())
 *   const row = await sessionByHash(services.reads).get({ hash })
 *
 * On the inline reader (inline.ts) the prepared query is a cached SQLite statement and runs
 * synchronously; on an asynchronous database (a libsql server, the reader pool) it skips the build
 * and answers a promise, which is why callers always `await` it. A transaction is a new database
 * each time, so inside one the query is simply built again.
 */
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core'
import type * as schema from './schema.js'

/** Any of Plaza's databases: the write client, a transaction, the inline reader, the reader pool. */
export type AnyDb = BaseSQLiteDatabase<'sync' | 'async', any, typeof schema>

export function prepared<P>(build: (db: AnyDb) => P): (db: AnyDb) => P {
  const byDb = new WeakMap<AnyDb, P>()
  return (db) => {
    let query = byDb.get(db)
    if (query === undefined) {
      query = build(db)
      byDb.set(db, query)
    }
    return query
  }
}
