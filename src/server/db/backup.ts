/**
 * Backup and restore of the local database (`plaza admin backup|restore`). A backup is
 * `VACUUM INTO`: one read transaction, so it is a consistent copy taken while the server keeps
 * reading and writing (WAL). Restore checks that a file is a Plaza database this version can
 * open, then swaps it in with a rename, so `plaza.db` is always either the old or the new one.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { copyFile } from 'node:fs/promises'
import path from 'node:path'
import { createClient, type Client } from '@libsql/client'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { MIGRATIONS_DIR } from './client.js'

/** A refusal with the CLI exit code it maps to (1: the situation is wrong; 2: the command line is). */
export class BackupError extends Error {
  constructor(
    message: string,
    readonly exit: 1 | 2 = 1,
  ) {
    super(message)
  }
}

export const DATABASE_FILE = 'plaza.db'
const SIDE_FILES = ['-wal', '-shm', '-journal']

export interface BackupResult {
  file: string
  bytes: number
}

export interface DatabaseSummary {
  users: number
  posts: number
  /** Migrations applied in the file, and how many this version ships (the rest apply at the next start). */
  migrations: { applied: number; known: number }
}

function open(file: string): Client {
  return createClient({ url: `file:${file}` })
}

/** A private, empty file beside `target`, for writing a copy that only appears under `target` when complete. */
function privateTempBeside(target: string): string {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`)
  closeSync(openSync(temp, 'wx', 0o600))
  chmodSync(temp, 0o600)
  return temp
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Writes a consistent copy of `<dataDir>/plaza.db` to `target` (mode 0600), refusing to replace an existing file unless `force`. */
export async function backupDatabase(dataDir: string, target: string, force: boolean): Promise<BackupResult> {
  const source = path.join(dataDir, DATABASE_FILE)
  if (!existsSync(source)) throw new BackupError(`no Plaza database in ${dataDir} (pass --data-dir or set PLAZA_DATA_DIR)`)
  const file = path.resolve(target)
  if (!existsSync(path.dirname(file))) throw new BackupError(`${path.dirname(file)} does not exist`)
  if (existsSync(file) && statSync(file).isDirectory()) throw new BackupError(`${file} is a directory; name the backup file`)
  if (existsSync(file) && !force) throw new BackupError(`${file} already exists; pass --force to replace it`)
  // VACUUM INTO writes into an empty file as it finds it, so the copy is 0600 from its first byte.
  const temp = privateTempBeside(file)
  try {
    const client = open(source)
    try {
      await client.execute({ sql: 'VACUUM INTO ?', args: [temp] })
    } finally {
      client.close()
    }
    syncFile(temp)
    if (force) renameSync(temp, file)
    else {
      // link refuses to replace a file that appeared meanwhile, which rename would silently do.
      linkSync(temp, file)
      unlinkSync(temp)
    }
  } catch (error) {
    if (existsSync(temp)) unlinkSync(temp)
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError(`${file} already exists; pass --force to replace it`)
    throw error
  }
  return { file, bytes: statSync(file).size }
}

/** Checks that `file` is a healthy Plaza database whose migrations this version knows; summarises it. Messages call it `name`. */
export async function inspectDatabase(file: string, name = file): Promise<DatabaseSummary> {
  const header = Buffer.alloc(16)
  const fd = openSync(file, 'r')
  try {
    readSync(fd, header, 0, 16, 0)
  } finally {
    closeSync(fd)
  }
  if (header.toString('latin1') !== 'SQLite format 3\0') throw new BackupError(`${name} is not a Plaza database (not an SQLite file)`)
  const client = open(file)
  try {
    const check = await client.execute('PRAGMA quick_check')
    if (check.rows[0]?.[0] !== 'ok') throw new BackupError(`${name} is damaged: ${String(check.rows[0]?.[0])}`)
    const tables = new Set((await client.execute("SELECT name FROM sqlite_master WHERE type = 'table'")).rows.map((row) => String(row[0])))
    for (const table of ['__drizzle_migrations', 'users', 'posts', 'uploads']) {
      if (!tables.has(table)) throw new BackupError(`${name} is not a Plaza database (no ${table} table)`)
    }
    const known = new Set(readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR }).map((migration) => migration.hash))
    const applied = (await client.execute('SELECT hash FROM __drizzle_migrations')).rows.map((row) => String(row[0]))
    const unknown = applied.filter((hash) => !known.has(hash))
    if (unknown.length > 0) {
      throw new BackupError(`${name} was made by a newer or different Plaza: ${unknown.length} of its migrations are unknown to this version; restore it with the version that made it`)
    }
    const count = async (table: string) => Number((await client.execute(`SELECT count(*) FROM ${table}`)).rows[0][0])
    return { users: await count('users'), posts: await count('posts'), migrations: { applied: applied.length, known: known.size } }
  } catch (error) {
    if (error instanceof BackupError) throw error
    throw new BackupError(`${name} is not a Plaza database (${(error as Error).message})`)
  } finally {
    client.close()
  }
}

/**
 * Refuses while any process has the database open. In WAL mode every open connection holds a
 * shared lock, so an exclusive lock is only granted when nobody else (a server, an embedded CLI
 * command) is using it; closing it also checkpoints, leaving no -wal to go stale.
 */
async function assertNotInUse(file: string): Promise<void> {
  const client = open(file)
  try {
    await client.execute('PRAGMA locking_mode = EXCLUSIVE')
    await client.execute('BEGIN EXCLUSIVE')
    await client.execute('SELECT count(*) FROM sqlite_master')
    await client.execute('COMMIT')
  } catch (error) {
    if (/SQLITE_BUSY|database is locked/i.test(String((error as Error).message))) {
      throw new BackupError(`the database in ${path.dirname(file)} is in use: stop the server (and any plaza command using it) first`)
    }
    throw error
  } finally {
    client.close()
  }
}

/** Copies `from` into `<dataDir>/.restore-<random>`, checks the copy, then hands it to `swap`; the copy is gone afterwards either way. */
export async function stageRestore(dataDir: string, from: string): Promise<{ summary: DatabaseSummary; swap(): Promise<void>; discard(): void }> {
  const source = path.resolve(from)
  if (!existsSync(source) || !statSync(source).isFile()) throw new BackupError(`${source} is not a file`)
  // Restoring into a fresh directory is the disaster case; it is made private like the server makes it.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  chmodSync(dataDir, 0o700)
  const target = path.join(dataDir, DATABASE_FILE)
  if (path.resolve(source) === path.resolve(target)) throw new BackupError('that is the database itself; name a backup file')
  // Checked as a private copy in the data directory: the rename into place is then atomic, and the operator's file is never opened for writing.
  const staged = privateTempBeside(target)
  const discard = () => {
    for (const suffix of ['', ...SIDE_FILES]) if (existsSync(staged + suffix)) unlinkSync(staged + suffix)
  }
  try {
    await copyFile(source, staged)
    chmodSync(staged, 0o600)
    const summary = await inspectDatabase(staged, source)
    syncFile(staged)
    return {
      summary,
      async swap() {
        try {
          if (existsSync(target)) await assertNotInUse(target)
          // A -wal left beside the new file would be replayed into it; it belongs to the old one.
          for (const suffix of SIDE_FILES) if (existsSync(target + suffix)) unlinkSync(target + suffix)
          renameSync(staged, target)
          const dir = openSync(dataDir, 'r')
          try {
            fsyncSync(dir)
          } finally {
            closeSync(dir)
          }
        } finally {
          discard()
        }
      },
      discard,
    }
  } catch (error) {
    discard()
    throw error
  }
}
