/**
 * The remote database path (src/server/db/remote.ts, server-client.ts) against real sqld servers
 * (test/helpers/sqld.ts): what the protocol carries (typed values, batches with conditions,
 * interactive transactions tied to one stream by the baton, writers taking turns under sqld's
 * write lock and its 5 s transaction timeout), the start-up checks that say what a server lacks
 * before the first request, and the migration lease that lets hosts start together. The two
 * faults sqld cannot be made to have (foreign keys off, no FTS5) are played by a proxy in front of
 * a real sqld (test/helpers/sqld-proxy.ts), which also counts requests for the lease test.
 */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, type Client } from '@libsql/client'
import { MIGRATIONS_DIR, openDatabase } from '../../src/server/db/client.js'
import { RemoteDatabaseError, withMigrationLock } from '../../src/server/db/remote.js'
import { DatabaseUnavailableError } from '../../src/server/db/remote-error.js'
import { startSqld } from '../helpers/sqld.js'
import { startSqldProxy } from '../helpers/sqld-proxy.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'

const migrationCount = () => (JSON.parse(readFileSync(`${MIGRATIONS_DIR}/meta/_journal.json`, 'utf8')) as { entries: unknown[] }).entries.length

async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a refusal')
}

/** Waits until `check` holds, yielding to the event loop between tries (the proxy runs in this process). */
async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 200_000 && !check(); i++) await new Promise((resolve) => setImmediate(resolve))
  if (!check()) throw new Error(`never happened: ${what}`)
}

test('values keep their Hrana types both ways: integers beyond 2^53, floats, text, blobs, null, named arguments', async () => {
  const server = await startSqld()
  const client = createClient({ url: server.url, intMode: 'bigint' })
  try {
    await client.execute('create table v (i integer, f real, t text, b blob, n)')
    const big = 9007199254740993n
    await client.execute({ sql: 'insert into v values (:i, :f, :t, :b, :n)', args: { i: big, f: 1.5, t: 'ünïcode', b: new Uint8Array([0, 1, 255]), n: null } })
    const row = (await client.execute('select i, f, t, b, n, typeof(i) as ti, typeof(f) as tf from v')).rows[0]
    assert.is(row.i, big)
    assert.is(row.f, 1.5)
    assert.is(row.t, 'ünïcode')
    assert.equal([...new Uint8Array(row.b as ArrayBuffer)], [0, 1, 255])
    assert.is(row.n, null)
    assert.equal([row.ti, row.tf], ['integer', 'real'])
    // A JavaScript number travels as a Hrana float, as to sqld: SQLite's affinity makes it an integer in an integer column.
    await client.execute({ sql: 'insert into v (i) values (?)', args: [7] })
    assert.is((await client.execute('select typeof(i) as t from v where i = 7')).rows[0].t, 'integer')
  } finally {
    client.close()
    await server.close()
  }
})

test('a batch runs in one transaction: a failing step rolls back the steps before it', async () => {
  const server = await startSqld()
  const client = createClient({ url: server.url })
  try {
    await client.execute('create table t (id integer primary key)')
    const error = await refusal(client.batch(['insert into t values (1)', 'insert into t values (1)'], 'write'))
    assert.match(error.message, /UNIQUE constraint failed: t\.id/)
    assert.is(Number((await client.execute('select count(*) as n from t')).rows[0].n), 0)
    const results = await client.batch(['insert into t values (2)', 'select count(*) as n from t'], 'write')
    assert.is(results[0].rowsAffected, 1)
    assert.is(Number(results[1].rows[0].n), 1)
  } finally {
    client.close()
    await server.close()
  }
})

test('an interactive transaction is one stream: others read the last commit meanwhile, and a second writer waits its turn', async () => {
  const server = await startSqld()
  // The second writer goes through the counting proxy, so the test knows when its write has been sent.
  const proxy = await startSqldProxy(server.url)
  const first = createClient({ url: server.url })
  const second = createClient({ url: proxy.url })
  try {
    await first.execute('create table c (n integer)')
    await first.execute('insert into c values (0)')
    const tx = await first.transaction('write')
    await tx.execute('update c set n = n + 1')
    // Another stream reads the committed value, not the transaction's.
    assert.is(Number((await second.execute('select n from c')).rows[0].n), 0)
    let written = false
    const sent = proxy.pipelines
    const waiting = second.execute('update c set n = n + 10').then(() => (written = true))
    await until(() => proxy.pipelines > sent, 'the second writer sent its write')
    assert.is(Number((await tx.execute('select n from c')).rows[0].n), 1)
    assert.is(written, false, 'the second writer waits while the transaction holds the lock')
    await tx.commit()
    await waiting
    assert.is(Number((await first.execute('select n from c')).rows[0].n), 11)
  } finally {
    first.close()
    second.close()
    await proxy.close()
    await server.close()
  }
})

test("a writer holding sqld's write lock holds Plaza's write up, never makes it a 500: sqld ends the holder's transaction after 5 s and Plaza's goes through", async () => {
  const server = await startSqld()
  const plaza = await startTestServer({ databaseUrl: server.url })
  const holder = createClient({ url: server.url })
  try {
    const alice = await registerUser(plaza)
    const created = await plaza.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'locked out' } })
    assert.is(created.status, 201)
    await plaza.services.fanout.drain()
    // Another writer (another host, a long migration) takes the write lock and keeps it.
    const tx = await holder.transaction('write')
    await tx.execute(`insert into hashtags (tag) values ('held')`)
    const liked = await plaza.request('POST', `/api/mobile/interactions/like/${created.body.data.id}`, { token: alice.token })
    assert.is(liked.status, 200, JSON.stringify(liked.body))
    // The holder is the one that lost: its transaction was rolled back by the server.
    const lost = await refusal(tx.commit())
    assert.match(lost.message, /TRANSACTION_TIMEOUT/)
    assert.is(Number((await holder.execute(`select count(*) as n from hashtags where tag = 'held'`)).rows[0].n), 0)
  } finally {
    holder.close()
    await plaza.close()
    await server.close()
  }
})

test("a transaction sqld has timed out is a DatabaseUnavailableError (a 503 for the API), and the rollback that follows does not fail", async () => {
  const server = await startSqld()
  const database = await openDatabase({ dataDir: tempDir(), url: server.url })
  const other = createClient({ url: server.url })
  try {
    const tx = await database.client.transaction('write')
    await tx.execute(`insert into hashtags (tag) values ('slow')`)
    // Another writer waits for the lock; sqld gives it over once the transaction has held it 5 s.
    await other.execute(`insert into hashtags (tag) values ('next')`)
    const error = await refusal(tx.execute('select 1'))
    assert.instance(error, DatabaseUnavailableError)
    assert.match(error.message, /TRANSACTION_TIMEOUT/)
    await tx.rollback()
    assert.equal((await database.client.execute('select tag from hashtags order by tag')).rows.map((row) => row.tag), ['next'])
  } finally {
    other.close()
    await database.close()
    await server.close()
  }
})

test('a rolled-back transaction leaves nothing', async () => {
  const server = await startSqld()
  const client = createClient({ url: server.url })
  try {
    await client.execute('create table r (n integer)')
    const tx = await client.transaction('write')
    await tx.execute('insert into r values (1)')
    await tx.rollback()
    assert.is(Number((await client.execute('select count(*) as n from r')).rows[0].n), 0)
  } finally {
    client.close()
    await server.close()
  }
})

test('a wrong or missing auth token is refused at start-up in one line that never repeats the token; the right one opens it, libsql:// too', async () => {
  const server = await startSqld({ auth: true })
  try {
    for (const authToken of [undefined, 'a-wrong-token-value', `${server.token!.slice(0, -4)}AAAA`]) {
      const error = await refusal(openDatabase({ dataDir: tempDir(), url: server.url, authToken }))
      assert.instance(error, RemoteDatabaseError)
      assert.match(error.message, /cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+: .*401.*PLAZA_DATABASE_AUTH_TOKEN/)
      assert.not.match(error.message, /a-wrong-token-value|eyJ/)
      assert.not.match(error.message, /\n/)
    }
    // A libsql:// URL is the same protocol over HTTP (`?tls=0`: plain HTTP, as to a server on a private network).
    const database = await openDatabase({ dataDir: tempDir(), url: `${server.url.replace(/^http:/, 'libsql:')}?tls=0`, authToken: server.token })
    assert.is(Number((await database.client.execute('select count(*) as n from __drizzle_migrations')).rows[0].n), migrationCount())
    await database.close()
  } finally {
    await server.close()
  }
})

test('a server that cannot be reached, lacks FTS5 or does not enforce foreign keys is named at start-up', async () => {
  const gone = await startSqld()
  const url = gone.url
  await gone.close()
  const unreachable = await refusal(openDatabase({ dataDir: tempDir(), url }))
  assert.instance(unreachable, RemoteDatabaseError)
  assert.match(unreachable.message, /^cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+: connection refused \(ECONNREFUSED\)$/)

  // sqld always has FTS5 and foreign keys: the proxy plays a server without them (sqld-proxy.ts).
  const server = await startSqld()
  try {
    const noFts = await startSqldProxy(server.url, { withoutFts5: true })
    const error = await refusal(openDatabase({ dataDir: tempDir(), url: noFts.url }))
    await noFts.close()
    assert.instance(error, RemoteDatabaseError)
    assert.match(error.message, /has no FTS5, which search needs: .*no such function/)
    // Refused before any migration ran.
    const client = createClient({ url: server.url })
    assert.is((await client.execute(`select count(*) as n from sqlite_master where name = '__drizzle_migrations'`)).rows[0].n, 0)
    client.close()

    const noKeys = await startSqldProxy(server.url, { foreignKeysOff: true })
    const keys = await refusal(openDatabase({ dataDir: tempDir(), url: noKeys.url }))
    await noKeys.close()
    assert.instance(keys, RemoteDatabaseError)
    assert.match(keys.message, /does not enforce foreign keys/)

    // The real server passes both checks.
    const database = await openDatabase({ dataDir: tempDir(), url: server.url })
    await database.close()
  } finally {
    await server.close()
  }
})

test('hosts starting together: each migration applied once, whatever the number of hosts', async () => {
  const server = await startSqld()
  try {
    const databases = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ dataDir: tempDir(), url: server.url, migrationLock: { pollMs: 5 } })))
    const client = databases[0].client
    const applied = await client.execute('select count(*) as n from __drizzle_migrations')
    assert.is(Number(applied.rows[0].n), migrationCount())
    assert.is(Number((await client.execute('select count(*) as n from plaza_migration_lock')).rows[0].n), 0)
    // The schema works from every host.
    for (const database of databases) assert.is(Number((await database.client.execute('select count(*) as n from users')).rows[0].n), 0)
    await Promise.all(databases.map((database) => database.close()))
  } finally {
    await server.close()
  }
})

test('a live lease makes a starting host wait; a lease whose holder died runs out and is taken over', async () => {
  const server = await startSqld()
  // The waiting host goes through the counting proxy: its tries at the lease are seen there.
  const proxy = await startSqldProxy(server.url)
  const client: Client = createClient({ url: server.url })
  try {
    await client.execute('create table plaza_migration_lock (id integer primary key check (id = 1), holder text not null, expires_at integer not null)')
    // Another host holds the lease for an hour by the server's clock.
    await client.execute(`insert into plaza_migration_lock values (1, 'other-host', cast((julianday('now') - 2440587.5) * 86400000 as integer) + 3600000)`)
    let opened = false
    const opening = openDatabase({ dataDir: tempDir(), url: proxy.url, migrationLock: { pollMs: 1 } }).then((database) => {
      opened = true
      return database
    })
    const before = proxy.pipelines
    await until(() => proxy.pipelines >= before + 10, 'several tries at the lease')
    assert.is(opened, false, 'waits while the lease is held')
    assert.is((await client.execute(`select count(*) as n from sqlite_master where name = '__drizzle_migrations'`)).rows[0].n, 0)
    // The holder finishes (gives the lease back): the waiting host migrates.
    await client.execute(`delete from plaza_migration_lock where holder = 'other-host'`)
    const database = await opening
    assert.is(Number((await client.execute('select count(*) as n from __drizzle_migrations')).rows[0].n), migrationCount())
    await database.close()

    // A holder that died: its lease ran out a minute ago, so the next host takes it at once.
    await client.execute(`insert into plaza_migration_lock values (1, 'dead-host', cast((julianday('now') - 2440587.5) * 86400000 as integer) - 60000)`)
    const next = await openDatabase({ dataDir: tempDir(), url: server.url, migrationLock: { pollMs: 60_000 } })
    assert.is(Number((await client.execute('select count(*) as n from plaza_migration_lock')).rows[0].n), 0)
    await next.close()
  } finally {
    client.close()
    await proxy.close()
    await server.close()
  }
})

test('the lease is renewed while its holder works, and given back when the work fails', async () => {
  const server = await startSqld()
  const client = createClient({ url: server.url })
  try {
    const expiry = async () => Number((await client.execute('select expires_at from plaza_migration_lock')).rows[0].expires_at)
    const error = await refusal(
      withMigrationLock(client, { leaseMs: 60 }, async () => {
        const first = await expiry()
        // The renewal (every 20 ms here) moves the expiry on while the work goes on.
        let later = first
        for (let i = 0; i < 10_000 && later <= first; i++) later = await expiry()
        assert.ok(later > first, `renewed: ${first} → ${later}`)
        throw new Error('the migration failed')
      }),
    )
    assert.is(error.message, 'the migration failed')
    assert.is(Number((await client.execute('select count(*) as n from plaza_migration_lock')).rows[0].n), 0)
  } finally {
    client.close()
    await server.close()
  }
})

test.run()
