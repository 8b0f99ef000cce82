import { rmSync } from 'node:fs'
import { eq, sql, type SQL } from 'drizzle-orm'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import { unblocked } from '../../src/server/domain/relations.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig } from '../../src/server/config.js'
import { leanStatement, prepared } from '../../src/server/db/prepared.js'
import { users } from '../../src/server/db/schema.js'
import { silentLogger } from '../../src/server/logger.js'
import { createServices } from '../../src/server/services.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'

test("the write database and its transactions build no relational queries (drizzle would, per transaction); reads have them", async () => {
  const server = await startTestServer()
  const { db, reads } = server.services
  assert.equal(Object.keys(db.query), [])
  await db.transaction(async (tx) => assert.equal(Object.keys(tx.query), []))
  assert.ok('users' in reads.query)
  await server.close()
})

/** A read that keeps a reader worker busy for a while (seconds): a recursive count, no table needed. */
const slowCount = sql<number>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 10000000) select count(*) from c`

for (const which of ['reads', 'scans'] as const) {
  test(`services.${which} answers like services.db (all, get, values, relational, prepared), and sees a write committed just before`, async () => {
    const server = await startTestServer()
    const alice = await registerUser(server)
    const { db } = server.services
    const reads = server.services[which]
    assert.is.not(reads, db, 'a local file gets its own read connections')

    const select = (on: typeof reads) => on.select({ id: users.id, name: users.username, verified: users.isVerified }).from(users).where(eq(users.id, alice.id))
    assert.equal(await select(reads), await select(db))
    assert.equal(await select(reads).get(), { id: alice.id, name: alice.username, verified: false })
    assert.equal(await select(reads).values(), [[alice.id, alice.username, 0]])
    assert.is((await reads.query.users.findFirst({ where: eq(users.id, alice.id) }))?.username, alice.username)
    const byId = reads.select({ name: users.username }).from(users).where(eq(users.id, sql.placeholder('id'))).prepare()
    assert.equal(await byId.get({ id: alice.id }), { name: alice.username })
    assert.is(await byId.get({ id: -1 }), undefined)

    await db.update(users).set({ bio: 'written on the main connection' }).where(eq(users.id, alice.id))
    const [row] = await reads.select({ bio: users.bio }).from(users).where(eq(users.id, alice.id))
    assert.is(row.bio, 'written on the main connection')
    assert.equal(await byId.get({ id: alice.id }), { name: alice.username }, 'a prepared statement is reused after a write')
    await server.close()
  })
}

test('prepared() builds a query once per database', async () => {
  const server = await startTestServer()
  const { reads, scans } = server.services
  let built = 0
  const byId = prepared((db) => (built++, db.select({ id: users.id }).from(users).where(eq(users.id, sql.placeholder('id'))).prepare()))
  for (let i = 0; i < 3; i++) {
    await byId(reads).all({ id: 1 })
    await byId(scans).all({ id: 1 })
  }
  assert.is(built, 2)
  await server.close()
})

test('leanStatement renders a statement once and gives the text and values building it each time would', async () => {
  const build = (user: unknown, post: unknown) => sql`select ${user} as u, ${post} as p, ${'like'} as t from ${users} where ${unblocked(user as number, post as number)} limit 1`
  let built = 0
  const lean = leanStatement(['user', 'post'], (v) => (built++, build(v.user, v.post)))
  const dialect = new SQLiteSyncDialect()
  const textAndValues = (query: SQL) => {
    const { sql: text, params } = dialect.sqlToQuery(query)
    return { text, params }
  }
  for (const [user, post] of [[1, 2], [3, 4]]) assert.equal(textAndValues(lean({ user, post })), textAndValues(build(user, post)))
  assert.is(built, 1)

  const server = await startTestServer()
  const alice = await registerUser(server)
  assert.equal(await server.services.db.all(lean({ user: alice.id, post: 6 })), [{ u: alice.id, p: 6, t: 'like' }], 'it runs on the write client')
  await server.close()

  const literal = leanStatement(['x'], (v) => sql`select '?', ${v.x}`)
  assert.throws(() => literal({ x: 1 }), /a "\?" of its own/)
})

for (const which of ['reads', 'scans'] as const) {
test(`the ${which} connections refuse writes, and a failed read fails only its own query`, async () => {
  const server = await startTestServer()
  const reads = server.services[which]
  const attempt = async <T>(run: () => T | Promise<T>): Promise<any> => {
    try {
      return await run()
    } catch (error) {
      return error
    }
  }
  const write = await attempt(() => reads.run(sql`update users set bio = 'x'`))
  // drizzle wraps the driver's error (as it does for the libsql client); the cause is SQLite's.
  assert.is(write.cause?.code, 'SQLITE_READONLY')
  const bad = await attempt(() => reads.all(sql`select * from no_such_table`))
  assert.match(String(bad.cause?.message ?? bad.message), /no such table/)
  assert.equal(await reads.values(sql`select 1 as one`), [[1]])
  await server.close()
})
}

test('/health and a profile answer while a slow scan runs in a reader worker', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  const { scans: reads } = server.services
  // Start both workers first, so that the order below depends on where queries run, not on start-up.
  await Promise.all([reads.all(sql`select 1`), reads.all(sql`select 2`)])

  const finished: string[] = []
  const slow = Promise.resolve(reads.get(slowCount)).then(() => finished.push('slow read'))
  const health = server.request('GET', '/health').then((res) => {
    finished.push('health')
    return res
  })
  const profile = server.request('GET', '/api/mobile/user/profile', { token: alice.token }).then((res) => {
    finished.push('profile')
    return res
  })
  assert.is((await health).status, 200)
  const answered = await profile
  assert.is(answered.status, 200)
  assert.is(answered.body.data.username, alice.username)
  await slow
  assert.equal(finished.slice(0, 2).sort(), ['health', 'profile'])
  assert.is(finished[2], 'slow read', 'both answered before the slow read finished')
  await server.close()
})

test('readers off (embedded CLI) or PLAZA_DB_READERS=0: scans run inline like reads; a bad value is refused', async () => {
  const dataDir = tempDir()
  const embedded = await createServices(loadConfig({ dataDir, rateLimits: false }, {}), { logger: silentLogger, readers: false, maintenance: false })
  assert.is(embedded.scans, embedded.reads)
  await embedded.close()
  const off = await createServices(loadConfig({ dataDir, rateLimits: false }, { PLAZA_DB_READERS: '0' }), { logger: silentLogger, maintenance: false })
  assert.is(off.scans, off.reads)
  await off.close()
  const refused = await createServices(loadConfig({ dataDir, rateLimits: false }, { PLAZA_DB_READERS: 'two' }), { logger: silentLogger }).catch((error) => error)
  assert.match(String(refused.message), /PLAZA_DB_READERS/)
  rmSync(dataDir, { recursive: true, force: true })
})

test.run()
