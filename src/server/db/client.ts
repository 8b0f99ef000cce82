import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { createClient, type Client } from '@libsql/client'
import { drizzle, type LibSQLDatabase } from 'drizzle-orm/libsql'
import { migrate } from 'drizzle-orm/libsql/migrator'
import { ReaderPool, readDatabase, type ReadDb } from './readers.js'
import * as schema from './schema.js'

export type { ReadDb } from './readers.js'

export type Db = LibSQLDatabase<typeof schema>
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** The generated SQL migrations ship beside the sources; dist/ has the same depth as src/. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../src/server/db/migrations', import.meta.url))

export interface Database {
  /** Writes, transactions, and reads that must happen on the writing connection. */
  db: Db
  /** Reads off the event loop (reader workers) for a local file with readers; `db` otherwise. */
  reads: ReadDb
  client: Client
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** Local data directory; the database is `plaza.db` in it. */
  dataDir: string
  /** A libsql server (`libsql://`, `http://`, `https://`) to use instead of the local file. */
  url?: string
  authToken?: string
  /**
   * Reader worker threads for `reads` on a local file (0: `reads` is `db`, for a process that
   * answers one command and would only pay for starting them). A libsql server has no file to open.
   */
  readers?: number
}

/** Opens the database (local file in WAL mode, or a libsql server) and applies pending migrations. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  let client: Client
  if (options.url) {
    client = createClient({ url: options.url, authToken: options.authToken })
  } else {
    const file = path.resolve(options.dataDir, 'plaza.db')
    makePrivate(options.dataDir, file)
    client = createClient({ url: `file:${file}`, concurrency: 8, timeout: 5000 })
    await client.execute('PRAGMA journal_mode = WAL')
    await client.execute('PRAGMA synchronous = NORMAL')
  }
  await client.execute('PRAGMA foreign_keys = ON')
  const db = drizzle(client, { schema })
  await migrate(db, { migrationsFolder: MIGRATIONS_DIR })
  if (!options.url) {
    // SQLite gives -wal and -shm the database's mode; a pair left by an older version may still be 0644.
    for (const suffix of ['-wal', '-shm']) {
      const side = path.resolve(options.dataDir, `plaza.db${suffix}`)
      if (existsSync(side)) chmodSync(side, 0o600)
    }
  }
  const pool = !options.url && options.readers ? new ReaderPool(path.resolve(options.dataDir, 'plaza.db'), options.readers) : null
  return {
    db,
    reads: pool ? readDatabase(pool) : db,
    client,
    async close() {
      await pool?.close()
      client.close()
    },
  }
}

/**
 * The database holds emails and password hashes: the data directory is 0700 and `plaza.db` 0600
 * whatever the umask (which can only narrow a mode, and may be 0), including for a directory or
 * file made by an older version. The file is created here because libsql would create it 0644.
 */
function makePrivate(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  chmodSync(dataDir, 0o700)
  closeSync(openSync(file, 'a', 0o600))
  chmodSync(file, 0o600)
}

const BUSY = /SQLITE_BUSY|database is locked/i

/**
 * Runs `fn` in an immediate (write-locking) transaction, so concurrent writers queue on SQLite's
 * busy timeout instead of failing on a lock upgrade; retries a few times if the lock still can't be had.
 */
export async function writeTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(fn, { behavior: 'immediate' })
    } catch (error) {
      if (attempt >= 5 || !BUSY.test(String((error as Error)?.message ?? error) + String((error as { cause?: unknown })?.cause ?? ''))) throw error
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt))
    }
  }
}
