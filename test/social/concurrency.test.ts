import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { notificationsOf, post, rawClient } from './helpers.js'

let server: TestServer
let crowd: Array<{ token: string; id: number; username: string }>
test.before(async () => {
  server = await startTestServer()
  crowd = await Promise.all(Array.from({ length: 50 }, () => registerUser(server)))
})
test.after(async () => {
  await server.close()
})

test('50 users liking one post at the same moment leave likes_count at exactly 50, with no error', async () => {
  const author = await registerUser(server)
  const p = await post(server, author.token, { content: 'popular' })
  const answers = await Promise.all(crowd.map((u) => server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: u.token })))
  assert.equal(
    answers.map((a) => a.status),
    crowd.map(() => 200),
  )
  const counts = answers.map((a) => a.body.data.likes_count).sort((a, b) => a - b)
  assert.equal(counts, Array.from({ length: 50 }, (_, i) => i + 1), 'each like saw its own increment')
  const detail = await server.request('GET', `/api/mobile/posts/detail/${p.id}`)
  assert.is(detail.body.data.post.likes_count, 50)
  const rows = await rawClient(server).execute({ sql: 'select count(*) as n from likes where post_id = ?', args: [p.id] })
  assert.is(Number(rows.rows[0].n), 50)
  assert.is((await notificationsOf(server, author.id)).length, 50)
})

test('the same user liking and unliking concurrently keeps the counter equal to the rows', async () => {
  const author = await registerUser(server)
  const p = await post(server, author.token, { content: 'flip-flop' })
  const calls = crowd.slice(0, 20).flatMap((u) => [
    server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: u.token }),
    server.request('DELETE', `/api/mobile/interactions/unlike/${p.id}`, { token: u.token }),
    server.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: u.token }),
  ])
  const answers = await Promise.all(calls)
  assert.ok(answers.every((a) => a.status === 200), JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body)))
  const rows = await rawClient(server).execute({ sql: 'select (select count(*) from likes where post_id = ?) as n, likes_count from posts where id = ?', args: [p.id, p.id] })
  assert.is(Number(rows.rows[0].likes_count), Number(rows.rows[0].n))
})

test('50 concurrent follows and comments keep followers_count and comments_count exact', async () => {
  const star = await registerUser(server)
  const p = await post(server, star.token, { content: 'comment here' })
  const answers = await Promise.all([
    ...crowd.map((u) => server.request('POST', `/api/mobile/user/follow/${star.id}`, { token: u.token })),
    ...crowd.map((u) => server.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: u.token, body: { content: `from ${u.username}` } })),
  ])
  assert.ok(answers.every((a) => a.status === 200 || a.status === 201), JSON.stringify(answers.filter((a) => a.status >= 300).map((a) => a.body)))
  const profile = await server.request('GET', `/api/mobile/user/profile/${star.id}`, { token: star.token })
  assert.is(profile.body.data.followers_count, 50)
  const detail = await server.request('GET', `/api/mobile/posts/detail/${p.id}?limit=50`)
  assert.is(detail.body.data.post.comments_count, 50)
  assert.is(detail.body.data.comments.length, 50)
})

test('the data survives a restart on the same data directory', async () => {
  const dataDir = tempDir()
  try {
    const first = await startTestServer({ dataDir })
    const alice = await registerUser(first, 'restart_alice')
    const bob = await registerUser(first, 'restart_bob')
    await first.request('PUT', '/api/mobile/user/update', { token: alice.token, body: { bio: 'still here' } })
    await first.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: bob.token })
    const p = await post(first, alice.token, { content: 'durable #persistence' })
    await first.request('POST', `/api/mobile/interactions/like/${p.id}`, { token: bob.token })
    await first.request('POST', `/api/mobile/interactions/comment/${p.id}`, { token: bob.token, body: { content: 'agreed' } })
    await first.close()

    const second = await startTestServer({ dataDir })
    try {
      const profile = await second.request('GET', `/api/mobile/user/profile/${alice.id}`, { token: bob.token })
      assert.is(profile.status, 200, 'the old session token still works')
      assert.is(profile.body.data.bio, 'still here')
      assert.is(profile.body.data.followers_count, 1)
      assert.is(profile.body.data.posts_count, 1)
      assert.is(profile.body.data.is_following, true)
      const detail = await second.request('GET', `/api/mobile/posts/detail/${p.id}`, { token: bob.token })
      assert.is(detail.body.data.post.likes_count, 1)
      assert.is(detail.body.data.post.user_liked, true)
      assert.equal(detail.body.data.comments.map((c: any) => c.content), ['agreed'])
      const found = await second.request('GET', '/api/mobile/search/all?q=durable')
      assert.equal(found.body.data.posts.map((x: any) => x.id), [p.id])
      const tags = await second.request('GET', '/api/mobile/search/hashtags?q=persist')
      assert.equal(tags.body.data.hashtags, [{ tag: 'persistence', posts_count: 1 }])
    } finally {
      await second.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
