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
import { fillPlaceholders, sql, SQL, StringChunk, type Placeholder } from 'drizzle-orm'
import { SQLiteSyncDialect, type BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core'
import type * as schema from './schema.js'

/** Any of Plaza's databases: the write client, a transaction, the inline reader, the reader pool. */
export type AnyDb = BaseSQLiteDatabase<'sync' | 'async', any, typeof schema>

const dialect = new SQLiteSyncDialect()

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

/** A query's SQL text and values. */
export interface Rendered {
  sql: string
  params: unknown[]
}

/**
 * A raw `sql` query rendered once: `build` writes it with a placeholder for each of `names`, the
 * first call renders it, and every call fills in its values. Rendering a query with subqueries
 * (a visibility rule, a block test) takes drizzle 8-40 µs, the same for every call.
 */
export function renderOnce<K extends string>(names: readonly K[], build: (values: Record<K, Placeholder>) => SQL): (values: Record<K, unknown>) => Rendered {
  let rendered: Rendered | undefined
  return (values) => {
    if (!rendered) {
      const placeholders = Object.fromEntries(names.map((name) => [name, sql.placeholder(name)])) as unknown as Record<K, Placeholder>
      rendered = dialect.sqlToQuery(build(placeholders))
    }
    return { sql: rendered.sql, params: fillPlaceholders(rendered.params, values) }
  }
}

/**
 * A statement for the write lock's hot path, rendered once (renderOnce): each call answers a flat
 * `SQL` of the rendered text and its values, which a transaction runs like any other and drizzle
 * renders again in a few microseconds, where the statement itself took up to 40, all of them
 * under the write lock. The text holds no `?` but its parameters' (checked on the first call).
 */
export function leanStatement<K extends string>(names: readonly K[], build: (values: Record<K, Placeholder>) => SQL): (values: Record<K, unknown>) => SQL {
  const render = renderOnce(names, build)
  let segments: string[] | undefined
  return (values) => {
    const { sql: text, params } = render(values)
    if (!segments) {
      segments = text.split('?')
      if (segments.length !== params.length + 1) throw new Error(`a lean statement has a "?" of its own: ${text}`)
    }
    const chunks: unknown[] = [new StringChunk(segments[0])]
    for (let i = 0; i < params.length; i++) chunks.push(params[i], new StringChunk(segments[i + 1]))
    return new SQL(chunks as SQL['queryChunks'])
  }
}
