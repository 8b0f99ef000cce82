import { rmSync } from 'node:fs'
import path from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openConnection, StatementCache } from '../../src/server/db/connection.js'
import { openDatabase, writeTransaction, type ReadDb } from '../../src/server/db/client.js'
import { LocalClient } from '../../src/server/db/local-client.js'
import { users } from '../../src/server/db/schema.js'
import { tempDir } from '../helpers/server.js'

const EXPECTED = { synchronous: 1, foreign_keys: 1, busy_timeout: 5000, cache_size: -32000, mmap_size: 0, temp_store: 2, journal_size_limit: 67108864 }
/** The write client waits for another process's lock from a timer, not in SQLite's sleeping busy handler. */
const WRITER = { ...EXPECTED, busy_timeout: 0 }

/** The first value of the first row (the libsql driver's rows are array-like, the reader's are arrays). */
async function valueOf(db: ReadDb, query: ReturnType<typeof sql.raw>): Promise<unknown> {
  const rows = await db.values<unknown[]>(query)
  return rows[0][0]
}

async function pragmasOf(db: ReadDb): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {}
  for (const name of Object.keys(EXPECTED)) values[name] = await valueOf(db, sql.raw(`PRAGMA ${name}`))
  return values
}

const addUser = (db: ReadDb, username: string) =>
  db.insert(users).values({ username, email: `${username}@example.com`, fullName: username, passwordHash: 'x', createdAt: 0 })

test('every connection has the pragmas: the one a transaction holds, the one used beside it, and the readers', async () => {
  const dataDir = tempDir()
  const database = await openDatabase({ dataDir, readers: 1 })
  await database.db.transaction(async (tx) => {
    await addUser(tx, 'inside')
    // A second connection: it does not see the transaction's uncommitted row.
    const [beside] = await database.db.select({ n: sql<number>`count(*)` }).from(users).where(eq(users.username, 'inside'))
    assert.is(beside.n, 0, 'the concurrent query ran on another connection')
    assert.equal(await pragmasOf(database.db), WRITER)
    assert.equal(await pragmasOf(tx), WRITER)
  })
  assert.equal(await pragmasOf(database.reads), EXPECTED)
  assert.is(await valueOf(database.reads, sql.raw('PRAGMA query_only')), 1)
  await database.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('transactions take turns: one that yields to the event loop mid-way never meets SQLITE_BUSY', async () => {
  const dataDir = tempDir()
  const { db, close } = await openDatabase({ dataDir })
  const events: string[] = []
  await Promise.all(
    ['a', 'b', 'c'].map((name) =>
      writeTransaction(db, async (tx) => {
        events.push(`begin ${name}`)
        await addUser(tx, name)
        // A macrotask, as a transaction waiting on anything but the database would yield.
        await new Promise((resolve) => setImmediate(resolve))
        events.push(`commit ${name}`)
      }),
    ),
  )
  assert.equal(events, ['begin a', 'commit a', 'begin b', 'commit b', 'begin c', 'commit c'])
  assert.is((await db.select().from(users)).length, 3)
  await close()
  rmSync(dataDir, { recursive: true, force: true })
})

test("another process's write lock is waited for without blocking the event loop", async () => {
  const dataDir = tempDir()
  const { db, close } = await openDatabase({ dataDir })
  // Another process's connection (same file, its own lock) holds the write lock.
  const other = openConnection(path.join(dataDir, 'plaza.db'))
  other.exec('BEGIN IMMEDIATE')
  other.exec(`INSERT INTO users (username, email, full_name, password_hash, created_at) VALUES ('other', 'other@example.com', 'other', 'x', 0)`)
  let ticks = 0
  const ticker = setInterval(() => ticks++, 1)
  const writing = writeTransaction(db, (tx) => addUser(tx, 'waiting'))
  // The event loop keeps turning while the write waits; then the lock is released and the write goes through.
  while (ticks < 5) await new Promise((resolve) => setTimeout(resolve, 1))
  other.exec('COMMIT')
  await writing
  clearInterval(ticker)
  assert.equal((await db.select({ name: users.username }).from(users)).map((row) => row.name).sort(), ['other', 'waiting'])
  // Plain statements outside a transaction wait the same way.
  other.exec('BEGIN IMMEDIATE')
  const plain = addUser(db, 'plain').then(() => 'done')
  await new Promise((resolve) => setTimeout(resolve, 5))
  const before = await Promise.race([plain, Promise.resolve('waiting')])
  other.exec('COMMIT')
  assert.is(before, 'waiting')
  assert.is(await plain, 'done')
  other.close()
  await close()
  rmSync(dataDir, { recursive: true, force: true })
})

test("a write refused by another process's lock leaves the client able to write (libsql never resets a refused statement)", async () => {
  const dataDir = tempDir()
  const file = path.join(dataDir, 'plaza.db')
  await (await openDatabase({ dataDir })).close()
  const insert = (name: string) => ({ sql: 'INSERT INTO users (username, email, full_name, password_hash, created_at) VALUES (?, ?, ?, ?, 0)', args: [name, `${name}@example.com`, name, 'x'] })
  const client = new LocalClient(file, { lockWaitMs: 20 })
  const other = openConnection(file)
  other.exec('BEGIN IMMEDIATE')
  other.exec(`INSERT INTO users (username, email, full_name, password_hash, created_at) VALUES ('other', 'other@example.com', 'other', 'x', 0)`)
  // Refused twice: a plain write, then a transaction's BEGIN, each after its wait.
  const refused = await client.execute(insert('refused')).then(() => null, (error: { code?: string }) => error.code)
  assert.is(refused, 'SQLITE_BUSY')
  const refusedBegin = await client.transaction('write').then(() => null, (error: { code?: string }) => error.code)
  assert.is(refusedBegin, 'SQLITE_BUSY')
  other.exec('COMMIT')
  // Another process commits again, so a snapshot pinned by a refused statement would be stale.
  other.exec(`UPDATE users SET full_name = 'Other' WHERE username = 'other'`)
  await client.execute(insert('plain'))
  const tx = await client.transaction('write')
  await tx.execute(insert('in-transaction'))
  await tx.commit()
  await client.batch([insert('batched')], 'deferred')
  await client.batch([insert('batched-write')], 'write')
  const names = await client.execute('SELECT username FROM users ORDER BY username')
  assert.equal(names.rows.map((row) => row.username), ['batched', 'batched-write', 'in-transaction', 'other', 'plain'])
  other.close()
  client.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('a failed transaction rolls back and gives its turn and connection back', async () => {
  const dataDir = tempDir()
  const { db, close } = await openDatabase({ dataDir })
  await addUser(db, 'taken')
  const failed = await writeTransaction(db, async (tx) => {
    await addUser(tx, 'rolled-back')
    await addUser(tx, 'taken')
  }).catch((error) => error)
  assert.match(String(failed.cause?.message ?? failed.message), /UNIQUE constraint failed/)
  assert.is(failed.cause?.code, 'SQLITE_CONSTRAINT')
  await writeTransaction(db, (tx) => addUser(tx, 'after'))
  assert.equal((await db.select({ name: users.username }).from(users)).map((row) => row.name).sort(), ['after', 'taken'])
  await close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('opening gathers planner statistics (ANALYZE once, then PRAGMA optimize)', async () => {
  const dataDir = tempDir()
  const database = await openDatabase({ dataDir })
  assert.is(await valueOf(database.db, sql.raw(`select count(*) from sqlite_master where name = 'sqlite_stat1'`)), 1)
  await database.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('statements are prepared once per SQL text; the least recently used goes past the capacity', () => {
  const dataDir = tempDir()
  const connection = openConnection(path.join(dataDir, 'cache.db'))
  const cache = new StatementCache(connection, 2)
  const one = cache.get('select 1')
  assert.is(cache.get('select 1'), one)
  const two = cache.get('select 2')
  cache.get('select 1')
  cache.get('select 3')
  assert.is(cache.size, 2)
  assert.is(cache.get('select 1'), one, 'recently used, so kept')
  assert.is.not(cache.get('select 2'), two, 'evicted, so prepared again')
  connection.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('follows and likes are WITHOUT ROWID link tables (migration 0005), with only the indexes they need', async () => {
  const dataDir = tempDir()
  const database = await openDatabase({ dataDir })
  // The write client's rows are array-like, not arrays.
  const rows = (await database.db.values(sql.raw(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('follows', 'likes') ORDER BY name`))).map(
    (row) => Array.from(row) as [string, string, string | null],
  )
  const tables = Object.fromEntries(rows.filter(([type]) => type === 'table').map(([, name, text]) => [name, text]))
  assert.match(String(tables.follows), /WITHOUT ROWID\s*$/)
  assert.match(String(tables.likes), /WITHOUT ROWID\s*$/)
  const indexes = rows.filter(([type]) => type === 'index').map(([, name]) => name)
  assert.equal(indexes, ['follows_following_created_idx', 'likes_user_idx'])
  await database.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test.run()
