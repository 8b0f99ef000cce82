/**
 * Replies: comments with `parent_id`, one level deep; `replies_count`; the detail's top-level
 * comments with their first replies; GET /comments/{id}/replies; the `reply` notification; and
 * deletions that take the replies with them, every count exact, also under concurrency.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { counterDrift } from './counters.js'
import { followUser, notificationsOf, post, rawClient } from './helpers.js'

const API = '/api/mobile'

let server: TestServer
let ann: RegisteredUser, bob: RegisteredUser, cat: RegisteredUser, dan: RegisteredUser
test.before(async () => {
  server = await startTestServer()
  ;[ann, bob, cat, dan] = await Promise.all(['ann_r', 'bob_r', 'cat_r', 'dan_r'].map((name) => registerUser(server, name)))
})
test.after(() => server.close())

async function comment(who: RegisteredUser, postId: number, content: string, parentId?: number) {
  const res = await server.request('POST', `${API}/interactions/comment/${postId}`, { token: who.token, body: { content, parent_id: parentId } })
  if (res.status !== 201) throw new Error(`comment: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body as { message: string; data: { id: number; content: string; parent_id: number | null; replies_count: number; mentions: Array<{ user_id: number }> } }
}

const detail = (postId: number, query = '', token = dan.token) => server.request('GET', `${API}/posts/detail/${postId}${query}`, { token }).then((res) => res.body.data)

test('a reply names its parent; a reply to a reply joins the same thread and names whom it answers; each is told once', async () => {
  const p = await post(server, ann.token, { content: 'thread here' })
  const top = (await comment(bob, p.id, 'first!')).data
  assert.equal([top.parent_id, top.replies_count], [null, 0])
  const reply = await comment(cat, p.id, 'agreed', top.id)
  assert.equal([reply.message, reply.data.parent_id, reply.data.content], ['Reply added', top.id, 'agreed'])
  // dan answers cat's reply: it attaches to bob's comment and starts with @cat_r.
  const deeper = (await comment(dan, p.id, 'me too', reply.data.id)).data
  assert.equal([deeper.parent_id, deeper.content], [top.id, `@${cat.username} me too`])
  assert.equal(deeper.mentions.map((m) => m.user_id), [cat.id])
  // Naming them already: no second @.
  const named = (await comment(bob, p.id, `@${dan.username} sure`, deeper.id)).data
  assert.is(named.content, `@${dan.username} sure`)
  // Told: bob of cat's reply, cat of dan's (a reply, not a mention), dan of bob's; ann of each as the post's author.
  const about = async (who: RegisteredUser) => (await notificationsOf(server, who.id)).filter((n) => n.post_id === p.id).map((n) => [n.type, n.actor_id])
  assert.equal(await about(bob), [['reply', cat.id]])
  assert.equal(await about(cat), [['reply', dan.id]])
  assert.equal(await about(dan), [['reply', bob.id]])
  assert.equal(await about(ann), [['comment', bob.id], ['comment', cat.id], ['comment', dan.id], ['comment', bob.id]])
  // Replying to the post author's own comment: ann is told once, as a reply.
  const annTop = (await comment(ann, p.id, 'thanks all')).data
  await comment(cat, p.id, 'welcome', annTop.id)
  assert.equal((await about(ann)).slice(-1), [['reply', cat.id]])
  const d = await detail(p.id)
  assert.is(d.post.comments_count, 6)
  assert.equal(d.comments.map((c: { id: number; replies_count: number }) => [c.id, c.replies_count]), [[top.id, 3], [annTop.id, 1]])
  assert.equal(d.comments[0].replies.map((r: { id: number }) => r.id), [reply.data.id, deeper.id, named.id])
  assert.equal(await counterDrift(server), [])
})

test('detail brings each top-level comment with its first three replies; GET /comments/{id}/replies pages them all', async () => {
  const p = await post(server, ann.token, { content: 'many replies' })
  const top = (await comment(bob, p.id, 'top')).data
  const replies: number[] = []
  for (let i = 0; i < 5; i++) replies.push((await comment(i % 2 ? cat : dan, p.id, `reply ${i}`, top.id)).data.id)
  const other = (await comment(cat, p.id, 'another top')).data
  const d = await detail(p.id)
  assert.equal(d.comments.map((c: { id: number }) => c.id), [top.id, other.id])
  assert.equal(d.comments[0].replies.map((r: { id: number }) => r.id), replies.slice(0, 3))
  assert.equal(d.comments[1].replies, [])
  assert.equal(Object.keys(d.comments[0].replies[0]).includes('replies'), false, 'a reply is a plain Comment')
  const page1 = (await server.request('GET', `${API}/comments/${top.id}/replies?limit=2`)).body.data
  const page3 = (await server.request('GET', `${API}/comments/${top.id}/replies?limit=2&page=3`)).body.data
  assert.equal([page1.replies.map((r: { id: number }) => r.id), page1.page, page1.has_more], [replies.slice(0, 2), 1, true])
  assert.equal([page3.replies.map((r: { id: number }) => r.id), page3.has_more], [replies.slice(4), false])
  // A reply has no replies of its own.
  assert.equal((await server.request('GET', `${API}/comments/${replies[0]}/replies`)).body.data.replies, [])
  // A reply whose author blocked the viewer is left out of the preview and the pages, and does not take a place.
  await server.request('POST', `${API}/user/block/${bob.id}`, { token: dan.token })
  try {
    const hiddenTop = await detail(p.id, '', bob.token)
    assert.equal(hiddenTop.comments.map((c: { id: number }) => c.id), [top.id, other.id])
    assert.equal(hiddenTop.comments[0].replies.map((r: { id: number }) => r.id), [replies[1], replies[3]])
    const asBob = (await server.request('GET', `${API}/comments/${top.id}/replies`, { token: bob.token })).body.data.replies
    assert.equal(asBob.map((r: { id: number }) => r.id), [replies[1], replies[3]])
    // And bob's own comment (the thread's head) is hidden from dan, with the replies under it.
    assert.equal((await detail(p.id)).comments.map((c: { id: number }) => c.id), [other.id])
    assert.is((await server.request('GET', `${API}/comments/${top.id}/replies`, { token: dan.token })).status, 404)
  } finally {
    await server.request('DELETE', `${API}/user/unblock/${bob.id}`, { token: dan.token })
  }
})

test('bad replies: unknown parent, a parent under another post, a bad id; replies of nothing or of an invisible post', async () => {
  const p = await post(server, ann.token, { content: 'one' })
  const q = await post(server, ann.token, { content: 'two' })
  const c = (await comment(bob, q.id, 'on two')).data
  const send = (body: Record<string, unknown>) => server.request('POST', `${API}/interactions/comment/${p.id}`, { token: cat.token, body })
  assert.equal([(await send({ content: 'x', parent_id: c.id })).status, (await send({ content: 'x', parent_id: c.id })).body.message], [404, 'Comment not found'])
  assert.is((await send({ content: 'x', parent_id: 999999 })).status, 404)
  for (const parent_id of ['abc', 0, -1, 1.5]) assert.is((await send({ content: 'x', parent_id })).status, 400, String(parent_id))
  assert.is((await send({ content: 'x', parent_id: null })).status, 201, 'null is no parent')
  assert.is((await server.request('GET', `${API}/comments/999999/replies`)).status, 404)
  assert.is((await server.request('GET', `${API}/comments/abc/replies`)).status, 400)
  const hidden = await post(server, ann.token, { content: 'followers only', is_public: false })
  await followUser(server, bob.token, ann.id)
  const underHidden = (await comment(bob, hidden.id, 'I follow')).data
  assert.is((await server.request('GET', `${API}/comments/${underHidden.id}/replies`, { token: cat.token })).status, 404)
  assert.is((await server.request('POST', `${API}/interactions/comment/${hidden.id}`, { token: cat.token, body: { content: 'x', parent_id: underHidden.id } })).status, 404)
  assert.equal(await counterDrift(server), [])
})

test('deleting a comment takes its replies, their notifications and images, and fixes every count; deleting a reply, its parent count', async () => {
  const p = await post(server, ann.token, { content: 'to be thinned' })
  const top = (await comment(bob, p.id, 'head')).data
  const r1 = (await comment(cat, p.id, `@${dan.username} one`, top.id)).data
  const r2 = (await comment(dan, p.id, 'two', top.id)).data
  assert.is((await detail(p.id)).post.comments_count, 3)
  assert.is((await server.request('DELETE', `${API}/interactions/comment/${r2.id}`, { token: dan.token })).status, 200)
  let d = await detail(p.id)
  assert.equal([d.post.comments_count, d.comments[0].replies_count], [2, 1])
  assert.is((await server.request('DELETE', `${API}/interactions/comment/${top.id}`, { token: ann.token })).status, 200, 'the post author may')
  d = await detail(p.id)
  assert.equal([d.post.comments_count, d.comments], [0, []])
  const left = await rawClient(server).execute({ sql: 'select count(*) as n from notifications where post_id = ? and type <> ?', args: [p.id, 'like'] })
  assert.is(Number(left.rows[0].n), 0, 'no comment, reply or mention notification left about the post')
  assert.is((await server.request('GET', `${API}/comments/${r1.id}/replies`)).status, 404)
  assert.equal(await counterDrift(server), [])
})

test('concurrent replies and deletions keep comments_count and replies_count exact', async () => {
  const server = await startTestServer()
  try {
    const author = await registerUser(server)
    const crowd = await Promise.all(Array.from({ length: 20 }, () => registerUser(server)))
    const p = await post(server, author.token, { content: 'busy thread' })
    const heads = await Promise.all(crowd.slice(0, 4).map((u) => server.request('POST', `${API}/interactions/comment/${p.id}`, { token: u.token, body: { content: 'head' } })))
    const headIds = heads.map((res) => res.body.data.id as number)
    const early = await Promise.all(crowd.map((u, i) => server.request('POST', `${API}/interactions/comment/${p.id}`, { token: u.token, body: { content: `early ${i}`, parent_id: headIds[i % 4] } })))
    assert.ok(early.every((res) => res.status === 201))
    // At once: more replies to every head, their authors deleting their early replies, and head 0 deleted by the post's author.
    const answers = await Promise.all([
      ...crowd.map((u, i) => server.request('POST', `${API}/interactions/comment/${p.id}`, { token: u.token, body: { content: `late ${i}`, parent_id: headIds[(i + 1) % 4] } })),
      ...crowd.slice(0, 10).map((u, i) => server.request('DELETE', `${API}/interactions/comment/${early[i].body.data.id}`, { token: u.token })),
      server.request('DELETE', `${API}/interactions/comment/${headIds[0]}`, { token: author.token }),
    ])
    // A late reply to head 0 is refused (404) when its deletion came first, else it goes with it; an early one already gone with head 0 is a 404.
    assert.ok(answers.every((res) => [200, 201, 404].includes(res.status)), JSON.stringify(answers.filter((res) => ![200, 201, 404].includes(res.status)).map((res) => res.body)))
    assert.equal(await counterDrift(server), [])
    const d = (await server.request('GET', `${API}/posts/detail/${p.id}?limit=50`)).body.data
    const rows = await rawClient(server).execute({ sql: 'select count(*) as n from comments where post_id = ?', args: [p.id] })
    assert.is(d.post.comments_count, Number(rows.rows[0].n))
    assert.equal(d.comments.map((c: { id: number }) => c.id).sort((a: number, b: number) => a - b), headIds.slice(1).sort((a, b) => a - b))
    const deepest = await rawClient(server).execute({ sql: 'select count(*) as n from comments where post_id = ? and parent_id = ?', args: [p.id, headIds[0]] })
    assert.is(Number(deepest.rows[0].n), 0, 'nothing left under the deleted head')
  } finally {
    await server.close()
  }
})

test.run()
