/**
 * Faults of a real sqld deployment (test/helpers/sqld.ts): the primary killed with `kill -9` while
 * writers write, and a replica that stops. Plaza answers what it cannot do with 503 and Retry-After
 * (never a 500, never a dropped connection, never a crash), serves reads from a replica meanwhile,
 * and recovers by itself when the server is back; every write it acknowledged is on the primary
 * afterwards (counted). The hosts give the database 2 s to answer (PLAZA_DATABASE_TIMEOUT) so that
 * an outage is said quickly; a replica whose primary is gone holds writes until then.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient } from '@libsql/client'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { startSqld, type Sqld } from '../helpers/sqld.js'

const API = '/api/mobile'
const env = { PLAZA_DATABASE_TIMEOUT: '2s' }

interface Answer {
  status: number | 'dropped'
  retryAfter?: string | null
  message?: string
  id?: number
  error?: string
}

/** A request that records what came back, a connection that failed included (fetch rejects). */
async function attempt(server: TestServer, method: string, route: string, user: RegisteredUser, body?: unknown): Promise<Answer> {
  try {
    const res = await server.request(method, API + route, { token: user.token, body })
    return { status: res.status, retryAfter: res.headers.get('retry-after'), message: res.body?.message, id: res.body?.data?.id }
  } catch (error) {
    return { status: 'dropped', error: String(error) }
  }
}

/** Every answer is a success or a 503 that says when to come back. */
function assertHonest(answers: Answer[], success: number) {
  const wrong = answers.filter((a) => a.status !== success && !(a.status === 503 && Number(a.retryAfter) > 0 && /unavailable|busy/.test(a.message ?? '')))
  assert.equal(wrong, [], `answers other than ${success} or 503 with Retry-After`)
}

/** Waits for `check`, yielding between tries; the bound only turns a regression into a failure. */
async function until(check: () => boolean | Promise<boolean>, what: string, tries = 6000) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`never happened: ${what}`)
}

test('the primary killed under a write load: 503 with Retry-After meanwhile, reads from the replica, recovery by itself, and every acknowledged write kept', async () => {
  const primary = await startSqld({ grpc: true })
  const replica = await startSqld({ primary })
  const writer = await startTestServer({ databaseUrl: primary.url, env })
  const reader = await startTestServer({ databaseUrl: replica.url, env })
  try {
    const users = await Promise.all(Array.from({ length: 4 }, () => registerUser(writer)))
    const reading = await registerUser(reader)
    const seed = await attempt(reader, 'POST', '/posts/create', reading, { content: 'readable during the outage' })
    assert.is(seed.status, 201)

    const answers: Answer[] = []
    const acknowledged = new Map<number, string>()
    let phase: 'before' | 'down' | 'after' = 'before'
    const counts = { before: 0, down: 0, after: 0 }
    let stop = false
    const load = users.map(async (user, w) => {
      for (let n = 0; !stop; n++) {
        const content = `load ${w}-${n} (${phase})`
        const answer = await attempt(writer, 'POST', '/posts/create', user, { content })
        answers.push(answer)
        counts[phase]++
        if (answer.status === 201) acknowledged.set(answer.id!, content)
      }
    })

    await until(() => acknowledged.size >= 20, '20 writes acknowledged before the kill')
    await primary.kill()
    phase = 'down'
    await until(() => {
      // Anything but a success or a 503 ends the wait (and the test) at once.
      assertHonest(answers, 201)
      return answers.filter((a) => a.status === 503).length >= 4
    }, 'writes answered 503 while the primary is down')
    // The replica host serves reads from the replica meanwhile; its writes, which need the primary, are 503s.
    const read = await attempt(reader, 'GET', '/posts/feed?page=1&limit=5', reading)
    assert.is(read.status, 200, JSON.stringify(read))
    const readWrite = await attempt(reader, 'POST', '/posts/create', reading, { content: 'while the primary is down' })
    assert.is(readWrite.status, 503, JSON.stringify(readWrite))
    assert.ok(Number(readWrite.retryAfter) > 0)

    const beforeRestart = acknowledged.size
    await primary.restart()
    phase = 'after'
    await until(() => acknowledged.size >= beforeRestart + 20, '20 more writes acknowledged after the restart')
    stop = true
    await Promise.all(load)

    assertHonest(answers, 201)
    assert.ok(counts.down > 0, 'writes were tried while the primary was down')
    // Every acknowledged write is on the primary, as acknowledged.
    const direct = createClient({ url: primary.url })
    try {
      const ids = [...acknowledged.keys()]
      const rows = await direct.execute(`select id, content from posts where id in (${ids.join(',')})`)
      assert.is(rows.rows.length, ids.length, `${ids.length} acknowledged, ${rows.rows.length} on the primary`)
      for (const row of rows.rows) assert.is(row.content, acknowledged.get(Number(row.id)))
    } finally {
      direct.close()
    }

    // The replica host writes again by itself (its first tries may still meet the replica reconnecting: 503s, never worse).
    const recovered: Answer[] = []
    await until(async () => {
      recovered.push(await attempt(reader, 'POST', '/posts/create', reading, { content: 'after the outage' }))
      return recovered.at(-1)!.status === 201
    }, 'a write through the replica host after the restart', 200)
    assertHonest(recovered, 201)
  } finally {
    await Promise.all([writer.close(), reader.close()])
    await replica.close()
    await primary.close()
  }
})

test('a replica that stops: its host answers 503 with Retry-After, and serves again when the replica is back', async () => {
  const primary = await startSqld({ grpc: true })
  const replica = await startSqld({ primary })
  const seeded = await startTestServer({ databaseUrl: primary.url, env })
  const host = await startTestServer({ databaseUrl: replica.url, env })
  try {
    const user = await registerUser(seeded)
    // The account shows through the replica once replicated.
    await until(async () => (await attempt(host, 'GET', `/user/profile/${user.id}`, user)).status === 200, 'the account replicated')
    await replica.kill()
    const down = [await attempt(host, 'GET', `/user/profile/${user.id}`, user), await attempt(host, 'GET', '/posts/feed?page=1&limit=5', user)]
    assert.equal(down.map((a) => a.status), [503, 503], JSON.stringify(down))
    assertHonest(down, 200)
    assert.is(down[0].message, 'The database is unavailable right now; try again shortly')
    await replica.restart()
    const back: Answer[] = []
    await until(async () => {
      back.push(await attempt(host, 'GET', `/user/profile/${user.id}`, user))
      return back.at(-1)!.status === 200
    }, 'the host serving again', 200)
    assertHonest(back, 200)
  } finally {
    await Promise.all([seeded.close(), host.close()])
    await replica.close()
    await primary.close()
  }
})

test.run()
