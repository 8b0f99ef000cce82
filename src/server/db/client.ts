import cluster from 'node:cluster'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { Client } from '@libsql/client'
import * as driverCore from 'drizzle-orm/libsql/driver-core'
import type { LibSQLDatabase } from 'drizzle-orm/libsql/driver-core'
import { startCheckpointer } from './checkpointer.js'
import { openInlineReads } from './inline.js'
import { LocalClient } from './local-client.js'
import { applyMigrations } from './migrate.js'
import type { MigrationLockOptions } from './remote.js'
import { ReaderPool, readDatabase, type ReadDb } from './readers.js'
import * as schema from './schema.js'
import { noWarm, poolWarm, WARM_THREADS, type Warm } from './warm.js'

export type { ReadDb } from './readers.js'

/**
 * drizzle-orm/libsql's `drizzle(client, config)` is driver-core's `construct` (exported, not declared
 * in its types); importing drizzle-orm/libsql itself would load `@libsql/client` for its
 * `createClient`, and with it the client's remote protocols (hrana, ws), which a local file never
 * uses: about a fifth of an embedded command's start-up.
 */
const drizzle = (driverCore as unknown as { construct: <S extends Record<string, unknown>>(client: Client, config: { schema: S }) => LibSQLDatabase<S> }).construct

export type Db = LibSQLDatabase<typeof schema>

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/**
 * The write database over `client`, without drizzle's relational queries (`db.query.*`): drizzle
 * builds one per table for every transaction object it makes (a write's transaction, and its
 * savepoint in a group), about 6 µs of each write on the event loop. Typed as `Db` so that it
 * passes wherever a database does; `db.query` is empty at run time (relational reads use `reads`).
 */
function writeDatabase(client: Client): Db {
  return drizzle(client, {} as { schema: typeof schema })
}

/** The generated SQL migrations ship beside the sources; dist/ has the same depth as src/. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../src/server/db/migrations', import.meta.url))

export interface Database {
  /** Writes, transactions, and reads that must happen on the writing connection. */
  db: Db
  /**
   * Reads whose cost does not grow with the data (lookups of a page or less): on the event loop's
   * thread, synchronously, over a read-only connection of their own (inline.ts). `db` for a libsql server.
   */
  reads: ReadDb
  /**
   * Reads that scan (search, ranking, deep pages): worker threads with their own read-only
   * connections (readers.ts), so they never hold up the event loop. `reads` where there are no readers.
   */
  scans: ReadDb
  /** Reads a write's pages before it takes the write lock (warm.ts); `noWarm` without reader workers or on a libsql server. */
  warm: Warm
  client: Client
  /**
   * Called before a request is served: a promise when `reads` must first catch up with a write
   * another process of this host acknowledged (an embedded replica, replica.ts), null when they
   * see it already (a local file, a libsql server).
   */
  caughtUp(): Promise<void> | null
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** Local data directory; the database is `plaza.db` in it. */
  dataDir: string
  /** A libsql server (`libsql://`, `http(s)://`, `ws(s)://`) to use instead of the local file (remote.ts). */
  url?: string
  authToken?: string
  /** The migration lease's timings on a libsql server (tests shorten them). */
  migrationLock?: MigrationLockOptions
  /** How long a request to a libsql server may take before the database counts as unavailable (server-client.ts). */
  requestTimeoutMs?: number
  /**
   * An embedded replica of the libsql server at `url`: this file, synced from it, is read locally
   * (replica.ts). Its slot (`replicaSlot`, a cluster worker's number) names a file of its own per process.
   */
  replica?: string
  replicaSlot?: number
  /** Hears of the embedded replica's failing syncs (and writes answered before it had them). */
  onReplicaError?: (message: string) => void
  /**
   * Reader worker threads for `scans` on a local file (0: `scans` is `reads`, for a process that
   * answers one command and would only pay for starting them). A libsql server has no file to open.
   */
  readers?: number
  /**
   * Checkpoint the WAL from a worker thread instead of inside commits (checkpointer.ts): for a
   * serving process on a local file. `onCheckpointError` hears of a failed checkpoint.
   */
  checkpoints?: boolean
  onCheckpointError?: (message: string) => void
}

/**
 * Which serving process this is, for what each keeps of its own (an embedded replica's file): 0 for a
 * process on its own, else the cluster worker's slot, which `plaza serve` hands a replacement of a
 * worker that died (PLAZA_WORKER_SLOT), so that it takes over its replica rather than syncing a new one.
 */
export function workerSlot(env: NodeJS.ProcessEnv): number {
  if (!cluster.isWorker) return 0
  return Number(env.PLAZA_WORKER_SLOT) || cluster.worker!.id
}

/** How often the server refreshes the planner's statistics (`PRAGMA optimize`, cheap when nothing changed). */
export const OPTIMIZE_INTERVAL_MS = 60 * 60 * 1000

/**
 * `ANALYZE` reads at most about this many rows of each index, so refreshing statistics stays in the
 * milliseconds whatever the table sizes (SQLite's advice for `PRAGMA optimize`).
 */
const OPTIMIZE = 'PRAGMA analysis_limit = 1000; PRAGMA optimize'

/**
 * Opens the database (local file in WAL mode, or a libsql server) and applies pending migrations.
 * A local file also gets planner statistics: `ANALYZE` on a database that has none yet, then
 * `PRAGMA optimize` now, every OPTIMIZE_INTERVAL_MS (the timer does not keep a process alive) and
 * at close. `optimize` only looks at tables the writing connection has queried since it opened,
 * which is why the first statistics come from a full (bounded) `ANALYZE`.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url && options.replica) return openReplicaDatabase(options as OpenDatabaseOptions & { url: string; replica: string })
  if (options.url) {
    // Loaded only here: the remote protocols (@libsql/client, hrana, ws) cost a local command's start-up nothing.
    const { openRemoteDatabase } = await import('./remote.js')
    const remote = await openRemoteDatabase({
      url: options.url,
      authToken: options.authToken,
      migrationsFolder: MIGRATIONS_DIR,
      migrationLock: options.migrationLock,
      dataDir: options.dataDir,
      requestTimeoutMs: options.requestTimeoutMs,
    })
    // No file to open beside it: every read is a request to the server, which answers them concurrently.
    return {
      db: remote.db,
      reads: remote.db,
      scans: remote.db,
      warm: noWarm,
      client: remote.client,
      caughtUp: () => null,
      async close() {
        remote.close()
      },
    }
  }
  const file = path.resolve(options.dataDir, 'plaza.db')
  makePrivate(options.dataDir, file)
  const client = new LocalClient(file, { autoCheckpoint: !options.checkpoints })
  try {
    await client.execute('PRAGMA journal_mode = WAL')
    const db = writeDatabase(client)
    await applyMigrations(client, MIGRATIONS_DIR)
    // SQLite gives -wal and -shm the database's mode; a pair left by an older version may still be 0644.
    for (const suffix of ['-wal', '-shm']) {
      const side = `${file}${suffix}`
      if (existsSync(side)) chmodSync(side, 0o600)
    }
    const analyzed = await client.execute(`SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'`)
    await client.executeMultiple(analyzed.rows.length ? OPTIMIZE : `PRAGMA analysis_limit = 1000; ANALYZE; PRAGMA optimize`)
    // A refresh that fails (another process holding the write lock past the busy timeout) only leaves the old statistics until the next one.
    const optimizer = setInterval(() => void client.executeMultiple(OPTIMIZE).catch(() => {}), OPTIMIZE_INTERVAL_MS).unref()
    const inline = openInlineReads(file)
    const pool = options.readers ? new ReaderPool(file, options.readers) : null
    const warmers = options.readers ? new ReaderPool(file, WARM_THREADS) : null
    const checkpointer = options.checkpoints ? startCheckpointer(file, { onError: options.onCheckpointError }) : null
    return {
      db,
      reads: inline.db,
      scans: pool ? readDatabase(pool) : inline.db,
      warm: warmers ? poolWarm(warmers) : noWarm,
      client,
      caughtUp: () => null,
      async close() {
        clearInterval(optimizer)
        await checkpointer?.close()
        await pool?.close()
        await warmers?.close()
        inline.close()
        await client.executeMultiple(OPTIMIZE).catch(() => {})
        client.close()
      },
    }
  } catch (error) {
    client.close()
    throw error
  }
}

/**
 * An embedded replica (replica.ts): writes and migrations on the libsql server, reads on a local
 * file synced from it, with the local file's inline connection and reader threads.
 */
async function openReplicaDatabase(options: OpenDatabaseOptions & { url: string; replica: string }): Promise<Database> {
  const [{ openRemoteDatabase, describeUrl }, { ReplicaSync, replicaFile }, { REQUEST_TIMEOUT_MS }] = await Promise.all([
    import('./remote.js'),
    import('./replica.js'),
    import('./server-client.js'),
  ])
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS
  const file = replicaFile(options.replica, options.replicaSlot ?? 0)
  let sync: Awaited<ReturnType<typeof ReplicaSync.start>> | null = null
  const remote = await openRemoteDatabase({
    url: options.url,
    authToken: options.authToken,
    migrationsFolder: MIGRATIONS_DIR,
    migrationLock: options.migrationLock,
    dataDir: options.dataDir,
    requestTimeoutMs,
    // A write resolves once this process's replica has it: its writer reads it at once.
    afterWrite: (index) => sync?.until(index) ?? Promise.resolve(),
  })
  try {
    // After the migrations: the first sync brings the schema they made.
    sync = await ReplicaSync.start({ file, url: options.url, authToken: options.authToken, where: describeUrl(options.url), waitMs: requestTimeoutMs, onError: options.onReplicaError })
  } catch (error) {
    remote.close()
    throw error
  }
  const started = sync
  const inline = openInlineReads(file)
  const pool = options.readers ? new ReaderPool(file, options.readers) : null
  return {
    db: remote.db as unknown as Db,
    reads: inline.db,
    scans: pool ? readDatabase(pool) : inline.db,
    warm: noWarm,
    client: remote.client,
    // Another process of this host wrote something this replica has not synced yet: catch up first.
    caughtUp: () => {
      const latest = remote.writes.latest()
      return latest > started.frame ? started.until(latest) : null
    },
    async close() {
      await pool?.close()
      inline.close()
      await started.close()
      remote.close()
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
 * Runs `fn` in an immediate (write-locking) transaction, so concurrent writers queue for the lock
 * (a local file's client waits for other processes from a timer, local-client.ts; a libsql server
 * queues them itself) instead of failing on a lock upgrade; retries a few times if the lock still can't be had.
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
