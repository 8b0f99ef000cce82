/**
 * The remote database path (src/server/db/remote.ts) against the Hrana test server: what the
 * protocol carries (typed values, batches with conditions, interactive transactions tied to one
 * stream by the baton, writers taking turns), the start-up checks that say what a server lacks
 * before the first request, and the migration lease that lets hosts start together.
 */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, type Client } from '@libsql/client'
import { MIGRATIONS_DIR, openDatabase } from '../../src/server/db/client.js'
import { RemoteDatabaseError, withMigrationLock } from '../../src/server/db/remote.js'
import { startHranaServer } from '../helpers/hrana-server.js'
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

/** Waits until `check` holds, yielding to the event loop between tries (the Hrana server runs in this process). */
async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 20_000 && !check(); i++) await new Promise((resolve) => setImmediate(resolve))
  if (!check()) throw new Error(`never happened: ${what}`)
}

test('values keep their Hrana types both ways: integers beyond 2^53, floats, text, blobs, null, named arguments', async () => {
  const server = await startHranaServer()
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
  const server = await startHranaServer()
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
  const server = await startHranaServer()
  const first = createClient({ url: server.url })
  const second = createClient({ url: server.url })
  try {
    await first.execute('create table c (n integer)')
    await first.execute('insert into c values (0)')
    const tx = await first.transaction('write')
    await tx.execute('update c set n = n + 1')
    assert.is(server.openStreams, 1)
    // Another stream reads the committed value, not the transaction's.
    assert.is(Number((await second.execute('select n from c')).rows[0].n), 0)
    let written = false
    const waiting = second.execute('update c set n = n + 10').then(() => (written = true))
    await until(() => server.pipelines >= 5, 'the second writer reached the server')
    assert.is(written, false, 'the second writer waits while the transaction holds the lock')
    assert.is(Number((await tx.execute('select n from c')).rows[0].n), 1)
    await tx.commit()
    await waiting
    assert.is(Number((await first.execute('select n from c')).rows[0].n), 11)
    assert.is(server.openStreams, 0)
  } finally {
    first.close()
    second.close()
    await server.close()
  }
})

test('a stream that commits and stays open gives the write lock back: the next writer does not wait for it', async () => {
  const server = await startHranaServer({ lockWaitMs: 2000 })
  const client = createClient({ url: server.url })
  try {
    await client.execute('create table k (n integer)')
    const execute = (sql: string) => ({ type: 'execute', stmt: { sql, args: [], named_args: [], want_rows: true } })
    // Raw Hrana: a deferred transaction whose write takes the lock, committed, and the stream kept (no close).
    const res = await fetch(`${server.url}/v2/pipeline`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ baton: null, requests: [execute('begin deferred'), execute('insert into k values (1)'), execute('commit')] }),
    })
    const body = (await res.json()) as { baton: string | null; results: Array<{ type: string }> }
    assert.equal(body.results.map((result) => result.type), ['ok', 'ok', 'ok'])
    assert.type(body.baton, 'string')
    assert.is(server.openStreams, 1)
    await client.execute('insert into k values (2)')
    assert.is(Number((await client.execute('select count(*) as n from k')).rows[0].n), 2)
  } finally {
    client.close()
    await server.close()
  }
})

test('a write that cannot get the lock in time is a 503 with Retry-After, not a 500; it works once the lock is free', async () => {
  const server = await startHranaServer({ lockWaitMs: 100 })
  const plaza = await startTestServer({ databaseUrl: server.url })
  const holder = createClient({ url: server.url })
  try {
    const alice = await registerUser(plaza)
    const created = await plaza.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'locked out' } })
    assert.is(created.status, 201)
    // The post's fan-out is a write of Plaza's own: done first, so that the holder below never waits
    // for it (on a loaded machine it outlasted the lock wait of 100 ms).
    await plaza.services.fanout.drain()
    // Another writer (another host, a long migration) holds the write lock.
    const tx = await holder.transaction('write')
    await tx.execute('select 1')
    const refused = await plaza.request('POST', `/api/mobile/interactions/like/${created.body.data.id}`, { token: alice.token })
    assert.is(refused.status, 503, JSON.stringify(refused.body))
    assert.is(refused.body.status, 'error')
    assert.is(refused.body.message, 'The database is busy; try again shortly')
    assert.is(refused.headers.get('retry-after'), '1')
    await tx.rollback()
    const liked = await plaza.request('POST', `/api/mobile/interactions/like/${created.body.data.id}`, { token: alice.token })
    assert.is(liked.status, 200, JSON.stringify(liked.body))
  } finally {
    holder.close()
    await plaza.close()
    await server.close()
  }
})

test('a rolled-back transaction leaves nothing, and its stream is closed', async () => {
  const server = await startHranaServer()
  const client = createClient({ url: server.url })
  try {
    await client.execute('create table r (n integer)')
    const tx = await client.transaction('write')
    await tx.execute('insert into r values (1)')
    await tx.rollback()
    assert.is(Number((await client.execute('select count(*) as n from r')).rows[0].n), 0)
    await until(() => server.openStreams === 0, 'the stream closed')
  } finally {
    client.close()
    await server.close()
  }
})

test('a wrong or missing auth token is refused at start-up in one line that never repeats the token; the right one opens it, libsql:// too', async () => {
  const server = await startHranaServer({ authToken: 'the-right-token' })
  try {
    for (const authToken of [undefined, 'a-wrong-token-value']) {
      const error = await refusal(openDatabase({ dataDir: tempDir(), url: server.url, authToken }))
      assert.instance(error, RemoteDatabaseError)
      assert.match(error.message, /cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+: .*401.*PLAZA_DATABASE_AUTH_TOKEN/)
      assert.not.match(error.message, /the-right-token|a-wrong-token-value/)
      assert.not.match(error.message, /\n/)
    }
    // A libsql:// URL is the same protocol over HTTP (`?tls=0`: plain HTTP, as to a server on a private network).
    const database = await openDatabase({ dataDir: tempDir(), url: `${server.url.replace(/^http:/, 'libsql:')}?tls=0`, authToken: 'the-right-token' })
    assert.is(Number((await database.client.execute('select count(*) as n from __drizzle_migrations')).rows[0].n), migrationCount())
    await database.close()
  } finally {
    await server.close()
  }
})

test('a server that cannot be reached, lacks FTS5 or does not enforce foreign keys is named at start-up', async () => {
  const gone = await startHranaServer()
  const url = gone.url
  await gone.close()
  const unreachable = await refusal(openDatabase({ dataDir: tempDir(), url }))
  assert.instance(unreachable, RemoteDatabaseError)
  assert.match(unreachable.message, /^cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+/)

  const noFts = await startHranaServer({ withoutFts5: true })
  try {
    const error = await refusal(openDatabase({ dataDir: tempDir(), url: noFts.url }))
    assert.instance(error, RemoteDatabaseError)
    assert.match(error.message, /has no FTS5, which search needs/)
    // Refused before any migration ran.
    const client = createClient({ url: noFts.url })
    assert.is((await client.execute(`select count(*) as n from sqlite_master where name = '__drizzle_migrations'`)).rows[0].n, 0)
    client.close()
  } finally {
    await noFts.close()
  }

  const noKeys = await startHranaServer({ foreignKeys: false })
  try {
    const error = await refusal(openDatabase({ dataDir: tempDir(), url: noKeys.url }))
    assert.instance(error, RemoteDatabaseError)
    assert.match(error.message, /does not enforce foreign keys/)
  } finally {
    await noKeys.close()
  }
})

test('hosts starting together: each migration applied once, whatever the number of hosts', async () => {
  const server = await startHranaServer()
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
  const server = await startHranaServer()
  const client: Client = createClient({ url: server.url })
  try {
    await client.execute('create table plaza_migration_lock (id integer primary key check (id = 1), holder text not null, expires_at integer not null)')
    // Another host holds the lease for an hour by the server's clock.
    await client.execute(`insert into plaza_migration_lock values (1, 'other-host', cast((julianday('now') - 2440587.5) * 86400000 as integer) + 3600000)`)
    let opened = false
    const opening = openDatabase({ dataDir: tempDir(), url: server.url, migrationLock: { pollMs: 1 } }).then((database) => {
      opened = true
      return database
    })
    const before = server.pipelines
    await until(() => server.pipelines >= before + 10, 'several tries at the lease')
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
    await server.close()
  }
})

test('the lease is renewed while its holder works, and given back when the work fails', async () => {
  const server = await startHranaServer()
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
