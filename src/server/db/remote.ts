/**
 * The database on a libsql server (sqld, Turso) instead of a local file: `PLAZA_DATABASE_URL`
 * (`libsql://`, `http(s)://`, `ws(s)://`) and `PLAZA_DATABASE_AUTH_TOKEN`. Several Plaza hosts
 * share it, so everything here is done so that hosts starting together agree:
 *
 * - Start-up checks what Plaza needs of the server, and says what is missing before the first
 *   request: that it answers (and accepts the token), that foreign keys are enforced on its
 *   connections (deletions and account erasure rely on cascades; libsql-server turns them on for
 *   every connection), and that it has FTS5 (search).
 * - Migrations run under a lease in the database itself (`plaza_migration_lock`, one row): the
 *   host that takes it applies what is pending while renewing it, the others wait for it and then
 *   find nothing left to apply, so no migration is applied twice. A lease whose holder died runs
 *   out after MIGRATION_LEASE_MS (measured by the server's clock, so the hosts' clocks don't matter)
 *   and the next host takes over; a migration is one transaction, so a dead holder's is rolled back.
 * - Only statements a libsql server's parser accepts are sent: sqld refuses (SQL_PARSE_ERROR)
 *   `ANALYZE`, `PRAGMA optimize`, setting pragmas such as `analysis_limit`, and anything on the
 *   `temp` schema, so there are no planner statistics here (Plaza's queries are planned on their
 *   indexes without them: test/social/query-plans.test.ts runs on sqld too) and FTS5 is probed
 *   with its `fts5_source_id()` function rather than a temporary table.
 */
import { randomUUID } from 'node:crypto'
import type { Client } from '@libsql/client'
import { drizzle, type LibSQLDatabase } from 'drizzle-orm/libsql'
import { applyMigrations } from './migrate.js'
import { DatabaseUnavailableError, RemoteDatabaseError } from './remote-error.js'
import * as schema from './schema.js'
import { ServerClient } from './server-client.js'
import { WriteIndex } from './write-index.js'

/** A remote database that cannot serve Plaza as configured: said at start-up, in one line. */
export { RemoteDatabaseError }

export interface MigrationLockOptions {
  /** How long a lease lasts unless renewed (the holder renews it every third of this). */
  leaseMs?: number
  /** How often a waiting host tries to take the lease. */
  pollMs?: number
}

export const MIGRATION_LEASE_MS = 30_000
const MIGRATION_POLL_MS = 250

/** The server's clock in epoch milliseconds, so that leases compare times from one clock. */
const SERVER_NOW = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`

/** The URL without credentials or query, for messages (a token never appears in one). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`
  } catch {
    return 'the configured URL'
  }
}

function reason(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause
  return String((error as Error)?.message ?? error) + (cause && !String((error as Error)?.message).includes(String((cause as Error)?.message ?? cause)) ? ` (${String((cause as Error)?.message ?? cause)})` : '')
}

export interface RemoteDatabase {
  client: Client
  db: LibSQLDatabase<typeof schema>
  /** This host's latest writes (write-index.ts). */
  writes: WriteIndex
  close(): void
}

export interface RemoteDatabaseOptions {
  url: string
  authToken?: string
  migrationsFolder: string
  migrationLock?: MigrationLockOptions
  /** The host's data directory: where the processes of one `plaza serve` share their latest write (write-index.ts). */
  dataDir?: string
  /** Overrides the deadline of a request to the server (server-client.ts; tests). */
  requestTimeoutMs?: number
  /** Hears of each write's replication index; the write resolves when it does (an embedded replica's sync). */
  afterWrite?: (index: bigint) => Promise<void>
}

/** Connects to the libsql server, checks it can serve Plaza, and applies pending migrations under the lease. */
export async function openRemoteDatabase(options: RemoteDatabaseOptions): Promise<RemoteDatabase> {
  const where = describeUrl(options.url)
  const writes = new WriteIndex(options.dataDir)
  let client: Client
  try {
    client = new ServerClient({ url: options.url, authToken: options.authToken, where, writes, requestTimeoutMs: options.requestTimeoutMs, afterWrite: options.afterWrite })
  } catch (error) {
    writes.close()
    throw new RemoteDatabaseError(`PLAZA_DATABASE_URL is not a usable libsql URL: ${reason(error)}`)
  }
  try {
    await checkServer(client, where)
    const db = drizzle(client, { schema })
    await withMigrationLock(client, options.migrationLock ?? {}, async () => {
      try {
        await applyMigrations(client, options.migrationsFolder)
      } catch (error) {
        throw new RemoteDatabaseError(`applying the migrations on the libsql server at ${where} failed: ${reason(error)}`)
      }
    })
    return {
      client,
      db,
      writes,
      close() {
        client.close()
        writes.close()
      },
    }
  } catch (error) {
    client.close()
    writes.close()
    throw error
  }
}

/** What Plaza needs of the server, checked before anything else runs on it. */
async function checkServer(client: Client, where: string): Promise<void> {
  let foreignKeys: unknown
  try {
    foreignKeys = (await client.execute('PRAGMA foreign_keys')).rows[0]?.[0]
  } catch (error) {
    const text = error instanceof DatabaseUnavailableError ? error.detail : reason(error)
    const hint = /\b401\b|\b403\b|unauthori[sz]ed|forbidden/i.test(text) ? ' (check PLAZA_DATABASE_AUTH_TOKEN)' : ''
    throw new RemoteDatabaseError(`cannot reach the libsql server at ${where}: ${text}${hint}`)
  }
  if (Number(foreignKeys) !== 1) {
    throw new RemoteDatabaseError(
      `the libsql server at ${where} does not enforce foreign keys on its connections; Plaza's deletions and account erasure rely on them (libsql-server and Turso turn them on)`,
    )
  }
  try {
    // A function of FTS5's own: there when the module is, and a read (sqld refuses CREATE on the temp schema).
    await client.execute('SELECT fts5_source_id()')
  } catch (error) {
    throw new RemoteDatabaseError(`the libsql server at ${where} has no FTS5, which search needs: ${reason(error)}`)
  }
}

/**
 * Runs `fn` holding the migration lease: one host at a time, across hosts. The lease is renewed
 * while `fn` runs and given back after it, even when it fails.
 */
export async function withMigrationLock<T>(client: Client, options: MigrationLockOptions, fn: () => Promise<T>): Promise<T> {
  const leaseMs = options.leaseMs ?? MIGRATION_LEASE_MS
  const pollMs = options.pollMs ?? MIGRATION_POLL_MS
  const holder = randomUUID()
  await client.execute(
    'CREATE TABLE IF NOT EXISTS plaza_migration_lock (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, expires_at INTEGER NOT NULL)',
  )
  for (;;) {
    // Taken when there is no row, or the row's lease has run out; RETURNING says whether this host got it.
    const taken = await client.execute({
      sql: `INSERT INTO plaza_migration_lock (id, holder, expires_at) VALUES (1, ?, ${SERVER_NOW} + ?)
            ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
            WHERE plaza_migration_lock.expires_at < ${SERVER_NOW}
            RETURNING holder`,
      args: [holder, leaseMs],
    })
    if (taken.rows.length && taken.rows[0][0] === holder) break
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
  let renewal: Promise<unknown> = Promise.resolve()
  const renew = setInterval(() => {
    renewal = client
      .execute({ sql: `UPDATE plaza_migration_lock SET expires_at = ${SERVER_NOW} + ? WHERE id = 1 AND holder = ?`, args: [leaseMs, holder] })
      .catch(() => {})
  }, Math.max(1, Math.floor(leaseMs / 3)))
  try {
    return await fn()
  } finally {
    clearInterval(renew)
    await renewal
    await client.execute({ sql: 'DELETE FROM plaza_migration_lock WHERE id = 1 AND holder = ?', args: [holder] }).catch(() => {})
  }
}
