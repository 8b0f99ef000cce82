/**
 * Explore (domain/explore.ts): one ranking per server, recomputed in the background once
 * EXPLORE_REFRESH_MS have passed on the injected clock (the request that notices is served the
 * old one); pages join ranked ids to rows, so counts, `user_liked` and visibility are read per request.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { EXPLORE_REFRESH_MS, exploreRefreshed } from '../../src/server/domain/explore.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { post, rawClient } from './helpers.js'

const clock = manualClock(new Date('2026-05-01T00:00:00Z'))
let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock })
})
test.after(async () => {
  await server.close()
})

const explore = async (token?: string, query = '') => (await server.request('GET', `/api/mobile/posts/explore${query}`, { token })).body.data
const ids = (data: any) => data.posts.map((p: any) => p.id)

/** A request notices the stale ranking and starts its recompute; then wait for it to land. */
async function recompute() {
  await explore()
  await exploreRefreshed(server.services.scans)
}

test('the ranking is kept until EXPLORE_REFRESH_MS pass, then recomputed off the request path; counts and user_liked are read per request', async () => {
  const author = await registerUser(server)
  const fan = await registerUser(server)
  const first = await post(server, author.token, { content: 'first' })
  clock.advance(1000)
  const second = await post(server, author.token, { content: 'second' })
  assert.equal(ids(await explore()), [second.id, first.id])

  // A like and a new post: the order stays until the ranking is recomputed, the count shows at once.
  await server.request('POST', `/api/mobile/interactions/like/${first.id}`, { token: fan.token })
  const third = await post(server, author.token, { content: 'third' })
  clock.advance(EXPLORE_REFRESH_MS - 1)
  const cached = await explore(fan.token)
  assert.equal(ids(cached), [second.id, first.id])
  assert.equal(cached.posts.map((p: any) => [p.likes_count, p.user_liked]), [[0, false], [1, true]])
  assert.equal(ids(await explore()), [second.id, first.id])
  assert.equal((await explore()).posts.map((p: any) => p.user_liked), [false, false], 'user_liked is per caller')

  clock.advance(1)
  // Stale: the request that notices does not wait for the recompute, it is served the old ranking.
  assert.equal(ids(await explore(fan.token)), [second.id, first.id])
  await exploreRefreshed(server.services.scans)
  // Recomputed: the liked post scores (1+1)/(age+2)², the others 1/(age+2)², newest first on ties.
  assert.equal(ids(await explore(fan.token)), [first.id, third.id, second.id])
})

test('a post made non-public or deleted after the ranking is left out at once; pages keep their positions', async () => {
  clock.advance(100 * 3_600_000) // the first test's posts have decayed far below fresh ones
  const author = await registerUser(server)
  const made: number[] = []
  for (let i = 0; i < 5; i++) {
    made.unshift((await post(server, author.token, { content: `page item ${i}` })).id)
    clock.advance(1)
  }
  await recompute()
  const top = ids(await explore(undefined, '?limit=5'))
  assert.equal(top, made)
  await rawClient(server).execute({ sql: 'update posts set is_public = 0 where id = ?', args: [made[1]] })
  await rawClient(server).execute({ sql: 'delete from posts where id = ?', args: [made[3]] })
  const page1 = await explore(undefined, '?limit=2')
  const page2 = await explore(undefined, '?limit=2&page=2')
  assert.equal(ids(page1), [made[0]])
  assert.equal(ids(page2), [made[2]])
  assert.is(page2.has_more, true)
})

test.run()
