/** Deletions racing likes, comments, follows and new posts: every answer is a 2xx or a 404, and every counter ends exact. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { counterDrift } from './counters.js'
import { followUser, post, rawClient } from './helpers.js'

const API = '/api/mobile'
let server: TestServer
let author: RegisteredUser
let crowd: RegisteredUser[]

test.before(async () => {
  server = await startTestServer()
  author = await registerUser(server)
  crowd = await Promise.all(Array.from({ length: 16 }, () => registerUser(server)))
  await Promise.all(crowd.slice(0, 8).map((user) => followUser(server, user.token, author.id)))
})
test.after(() => server.close())

async function rows(sqlText: string): Promise<number> {
  const result = await rawClient(server).execute(sqlText)
  return Number(Object.values(result.rows[0])[0])
}

test('posts deleted while others like, comment and post keep every counter exact', async () => {
  const targets = await Promise.all(Array.from({ length: 12 }, (_, i) => post(server, author.token, { content: `target ${i} #race #race${i % 3}` })))
  const doomed = targets.filter((_, i) => i % 2 === 0)
  const calls: Array<{ kind: string; run: () => Promise<{ status: number; body: any }> }> = []
  for (const target of targets) {
    for (const user of crowd) {
      calls.push({ kind: 'like', run: () => server.request('POST', `${API}/interactions/like/${target.id}`, { token: user.token }) })
      calls.push({
        kind: 'comment',
        run: () => server.request('POST', `${API}/interactions/comment/${target.id}`, { token: user.token, body: { content: `on ${target.id}` } }),
      })
    }
  }
  for (const target of doomed) calls.push({ kind: 'delete', run: () => server.request('DELETE', `${API}/posts/${target.id}`, { token: author.token }) })
  for (const user of crowd.slice(8)) {
    calls.push({ kind: 'follow', run: () => server.request('POST', `${API}/user/follow/${author.id}`, { token: user.token }) })
    calls.push({ kind: 'post', run: () => server.request('POST', `${API}/posts/create`, { token: user.token, body: { content: 'meanwhile #race' } }) })
  }
  calls.push({ kind: 'post', run: () => server.request('POST', `${API}/posts/create`, { token: author.token, body: { content: 'new while deleting #race' } }) })
  // Interleave the kinds so deletions land in the middle of the likes and comments.
  const order = calls.map((call, i) => ({ call, key: (i * 7919) % calls.length })).sort((a, b) => a.key - b.key)

  const answers = await Promise.all(order.map(async ({ call }) => ({ kind: call.kind, res: await call.run() })))
  const unexpected = answers.filter(({ kind, res }) => !(res.status < 300 || (res.status === 404 && (kind === 'like' || kind === 'comment'))))
  assert.equal(unexpected.map(({ kind, res }) => `${kind} ${res.status} ${res.body?.message}`), [])
  assert.ok(answers.some(({ kind, res }) => kind !== 'delete' && res.status === 404), 'some likes or comments came after a deletion')

  // Comments deleted concurrently with more likes: comments_count stays exact too.
  const survivors = targets.filter((target) => !doomed.includes(target))
  const commentIds = (await rawClient(server).execute(`select id from comments where post_id in (${survivors.map((t) => t.id).join(',')}) and id % 3 = 0`)).rows.map(
    (row) => Number(row.id),
  )
  const more = await Promise.all([
    ...commentIds.map((id) => server.request('DELETE', `${API}/interactions/comment/${id}`, { token: author.token })),
    ...survivors.map((target) => server.request('DELETE', `${API}/interactions/unlike/${target.id}`, { token: crowd[0].token })),
  ])
  assert.ok(more.every((res) => res.status === 200), JSON.stringify(more.filter((res) => res.status !== 200).map((res) => res.body)))

  await server.services.fanout.drain()
  assert.equal(await counterDrift(server), [])
  const gone = doomed.map((target) => target.id).join(',')
  for (const table of ['likes', 'comments', 'notifications', 'post_hashtags', 'timelines']) {
    assert.is(await rows(`select count(*) from ${table} where post_id in (${gone})`), 0, table)
  }
  assert.is(await rows(`select posts_count from users where id = ${author.id}`), survivors.length + 1)
  const profile = await server.request('GET', `${API}/user/profile/${author.id}`, { token: author.token })
  assert.is(profile.body.data.posts_count, survivors.length + 1)
})

test.run()
