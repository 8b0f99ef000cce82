/**
 * Group commit (local-client.ts): write transactions queued behind one another share one SQLite
 * transaction, each in a savepoint; a member's commit resolves only once the group has committed,
 * and a member that fails takes nothing of the others with it.
 */
import { rmSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openConnection } from '../../src/server/db/connection.js'
import { openDatabase, writeTransaction } from '../../src/server/db/client.js'
import { GROUP_MAX_MEMBERS, LocalClient } from '../../src/server/db/local-client.js'
import { users } from '../../src/server/db/schema.js'
import { tempDir } from '../helpers/server.js'

const insert = (name: string) => ({
  sql: 'INSERT INTO users (username, email, full_name, password_hash, created_at) VALUES (?, ?, ?, ?, 0)',
  args: [name, `${name}@example.com`, name, 'x'],
})

/** One write transaction of `client` that inserts the user `name` and commits. */
async function writeOne(client: LocalClient, name: string): Promise<void> {
  const tx = await client.transaction('write')
  await tx.execute(insert(name))
  await tx.commit()
}

/** A migrated database file, and a plain connection to it that sees only what is committed. */
async function database() {
  const dataDir = tempDir()
  const file = path.join(dataDir, 'plaza.db')
  await (await openDatabase({ dataDir })).close()
  const outside = openConnection(file)
  const names = () => (outside.prepare('SELECT username FROM users ORDER BY username').raw(true).all() as string[][]).map((row) => row[0])
  return {
    file,
    names,
    close() {
      outside.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Resolves with whether `promise` has settled by the time the event loop has run once more. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}

/**
 * A client whose first transaction wrote `first` and committed with a second one queued behind it:
 * the group stays open (its age limit is lifted, so a slow machine cannot close it early).
 */
async function groupOfTwo(file: string, options: ConstructorParameters<typeof LocalClient>[1] = {}) {
  const client = new LocalClient(file, { groupMaxMs: Infinity, ...options })
  const first = await client.transaction('write')
  await first.execute(insert('first'))
  const second = client.transaction('write')
  const firstCommitted = first.commit()
  return { client, second, firstCommitted }
}

test('a member is answered only once its group has committed, with the transaction queued behind it', async () => {
  const db = await database()
  const { client, second, firstCommitted } = await groupOfTwo(db.file)
  assert.is(await settledYet(firstCommitted), false, 'not answered while its group is open')
  assert.equal(db.names(), [], 'nothing committed yet')
  const tx = await second
  await tx.execute(insert('second'))
  await tx.commit()
  await firstCommitted
  assert.equal(db.names(), ['first', 'second'])
  client.close()
  db.close()
})

/** With `options`, the first transaction of groupOfTwo commits without waiting for the one queued behind it. */
async function commitsAlone(options: ConstructorParameters<typeof LocalClient>[1]) {
  const db = await database()
  const { client, second, firstCommitted } = await groupOfTwo(db.file, options)
  await firstCommitted
  assert.equal(db.names(), ['first'], 'committed without waiting for the queued transaction')
  const tx = await second
  await tx.execute(insert('second'))
  await tx.commit()
  assert.equal(db.names(), ['first', 'second'])
  client.close()
  db.close()
}

test('a group past its age limit commits at once, with a transaction queued behind it', () => commitsAlone({ groupMaxMs: 0 }))

test('a transaction alone commits at once', async () => {
  const db = await database()
  const client = new LocalClient(db.file)
  await writeOne(client, 'alone')
  assert.equal(db.names(), ['alone'])
  client.close()
  db.close()
})

test('writes asked for by two callbacks of one turn of the event loop (two requests read together) share a group', async () => {
  const db = await database()
  const client = new LocalClient(db.file)
  // Node runs each callback's microtasks before the next callback: a group that began at once
  // would have committed the first write, alone, before the second one asked.
  const writes: Array<Promise<void>> = []
  const committedWhenSecondAsked = await new Promise<string[]>((resolve) => {
    setImmediate(() => writes.push(writeOne(client, 'first')))
    setImmediate(() => {
      resolve(db.names())
      writes.push(writeOne(client, 'second'))
    })
  })
  await Promise.all(writes)
  assert.equal(committedWhenSecondAsked, [], 'the first write waited for the turn of the loop')
  assert.equal(db.names(), ['first', 'second'])
  client.close()
  db.close()
})

test('a member that fails rolls back alone; the others of its group commit', async () => {
  const db = await database()
  const { db: drizzleDb, close } = await openDatabase({ dataDir: path.dirname(db.file) })
  const add = (name: string) => drizzleDb.insert(users).values({ username: name, email: `${name}@example.com`, fullName: name, passwordHash: 'x', createdAt: 0 })
  const outcomes = await Promise.allSettled(
    ['a', 'b', 'c', 'd'].map((name) =>
      writeTransaction(drizzleDb, async (tx) => {
        await tx.insert(users).values({ username: name, email: `${name}@example.com`, fullName: name, passwordHash: 'x', createdAt: 0 })
        if (name === 'b') throw new Error('b fails')
        // A nested transaction (drizzle's savepoint inside the member's) that fails alone too.
        if (name === 'c') await tx.transaction(async (nested) => {
          await nested.insert(users).values({ username: 'c-nested', email: 'cn@example.com', fullName: 'c', passwordHash: 'x', createdAt: 0 })
          nested.rollback()
        }).catch(() => {})
        // A constraint error inside a member, caught: the member goes on.
        if (name === 'd') await add('a').catch(() => {})
        return name
      }),
    ),
  )
  assert.equal(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
  assert.equal(db.names(), ['a', 'c', 'd'])
  await close()
  db.close()
})

test('a group whose transaction is lost fails every member waiting on it, and the next one starts clean', async () => {
  const db = await database()
  const { client, second, firstCommitted } = await groupOfTwo(db.file)
  const tx = await second
  // Ends the shared transaction under the group (as SQLite does after SQLITE_FULL or an I/O error).
  await tx.execute('ROLLBACK')
  const refused = await tx.execute(insert('second')).then(() => null, (error: { code?: string }) => error.code)
  assert.is(refused, 'TRANSACTION_CLOSED')
  await tx.rollback()
  const firstOutcome = await firstCommitted.then(() => 'committed', (error: { code?: string }) => error.code)
  assert.is(firstOutcome, 'TRANSACTION_CLOSED', 'the first member learns its write is gone')
  await writeOne(client, 'third')
  assert.equal(db.names(), ['third'])
  client.close()
  db.close()
})

test('many writers in two clients (two processes) all commit, groups and batches interleaved', async () => {
  const db = await database()
  const clients = [new LocalClient(db.file), new LocalClient(db.file)]
  const count = GROUP_MAX_MEMBERS + 20
  const writes: Promise<unknown>[] = []
  for (let i = 0; i < count; i++) {
    for (const [c, client] of clients.entries()) {
      const name = `u${c}-${String(i).padStart(3, '0')}`
      if (i % 25 === 7) writes.push(client.batch([insert(name)], 'write'))
      else writes.push(writeOne(client, name))
    }
  }
  await Promise.all(writes)
  const names = db.names()
  assert.is(names.length, 2 * count)
  assert.is(new Set(names).size, 2 * count)
  for (const client of clients) client.close()
  db.close()
})

test('without group commit every transaction commits on its own', () => commitsAlone({ groupCommit: false }))

test('a read-only query beside an open group runs on its own connection and sees only what is committed', async () => {
  const db = await database()
  const { client, second, firstCommitted } = await groupOfTwo(db.file)
  const seen = await client.execute('SELECT count(*) AS n FROM users')
  assert.is(seen.rows[0].n, 0)
  const tx = await second
  await tx.commit()
  await firstCommitted
  assert.is((await client.execute('SELECT count(*) AS n FROM users')).rows[0].n, 1)
  client.close()
  db.close()
})

test.run()
