/**
 * Applying the migrations of `src/server/db/migrations` (drizzle-kit's files and journal) to a
 * database, recorded in drizzle's own table (`__drizzle_migrations`: one row per migration, its
 * file's hash and its journal time).
 *
 * drizzle's `migrate` applies only the migrations whose journal time is past the last one recorded.
 * Plaza's journal is not in time order: migrations 0004 to 0011 were given round times ahead of
 * the clock, and 0012 and 0013 were then generated with the real (earlier) time. A database that
 * had 0011 before 0012 existed would never have been given 0012 and 0013, and one that has them
 * all would never be given 0014 either. So here a migration is applied when it is not recorded,
 * by its journal time or by its file's hash (a file edited after it shipped is still recognised by
 * its time), whatever the times of the others; the missing ones run in journal order, in one
 * transaction.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Client } from '@libsql/client'

const TABLE = '__drizzle_migrations'

interface Journal {
  entries: Array<{ when: number }>
}

/** Applies every migration of `folder` the database has not recorded; resolves to how many it applied. */
export async function applyMigrations(client: Client, folder: string): Promise<number> {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')) as Journal
  const recorded = await recordedMigrations(client)
  // The usual case (every migration recorded) costs the journal and one query: no file is read.
  if (journal.entries.every((entry) => recorded.times.has(entry.when))) return 0
  // drizzle reads (and hashes) the files in journal order, each with its journal time (folderMillis);
  // loaded only now, as a current database (an embedded command's usual case) needs none of it.
  const { readMigrationFiles } = await import('drizzle-orm/migrator')
  const missing = readMigrationFiles({ migrationsFolder: folder }).filter(
    (migration) => !recorded.times.has(migration.folderMillis) && !recorded.hashes.has(migration.hash),
  )
  if (missing.length === 0) return 0
  await client.migrate([
    `CREATE TABLE IF NOT EXISTS ${TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
    ...missing.flatMap((migration) => [
      ...migration.sql.filter((statement) => statement.trim() !== ''),
      { sql: `INSERT INTO ${TABLE} (hash, created_at) VALUES (?, ?)`, args: [migration.hash, migration.folderMillis] },
    ]),
  ])
  return missing.length
}

/** The journal times and hashes recorded; none on a new database. */
async function recordedMigrations(client: Client): Promise<{ times: Set<number>; hashes: Set<string> }> {
  const table = await client.execute({ sql: `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, args: [TABLE] })
  if (table.rows.length === 0) return { times: new Set(), hashes: new Set() }
  const rows = (await client.execute(`SELECT hash, created_at FROM ${TABLE}`)).rows
  return { times: new Set(rows.map((row) => Number(row.created_at))), hashes: new Set(rows.map((row) => String(row.hash))) }
}
