/**
 * Bookmarks: saving and unsaving posts, `bookmarked` on every post the caller sees, the owner's
 * list newest saved first, and saved posts that later become invisible to their saver (made
 * followers-only, the author blocking, suspended or turning private, deleted) left out of it.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, post } from './helpers.js'

const API = '/api/mobile'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(() => server.close())

const save = (who: RegisteredUser, id: number) => server.request('POST', `${API}/posts/${id}/bookmark`, { token: who.token })
const unsave = (who: RegisteredUser, id: number) => server.request('DELETE', `${API}/posts/${id}/bookmark`, { token: who.token })
const saved = async (who: RegisteredUser, query = '') => (await server.request('GET', `${API}/posts/bookmarks${query}`, { token: who.token })).body.data

test('saving: idempotent, the list newest saved first and paged, `bookmarked` on every answer for the saver only', async () => {
  const [ann, bob, cat] = await Promise.all(['ann_b', 'bob_b', 'cat_b'].map((name) => registerUser(server, name)))
  await followUser(server, bob.token, ann.id)
  const made: number[] = []
  for (let i = 0; i < 3; i++) made.push((await post(server, ann.token, { content: `zqsaved post ${i}` })).id)
  // Saved in another order than made: the list is by when they were saved.
  for (const id of [made[1], made[0], made[2]]) {
    const res = await save(bob, id)
    assert.equal([res.status, res.body.message, res.body.data], [200, 'Post saved', { post_id: id, bookmarked: true }])
  }
  assert.is((await save(bob, made[1])).status, 200, 'saving again changes nothing')
  const page1 = await saved(bob, '?limit=2')
  assert.equal([page1.posts.map((p: { id: number }) => p.id), page1.has_more], [[made[2], made[0]], true])
  assert.equal((await saved(bob, '?limit=2&page=2')).posts.map((p: { id: number }) => p.id), [made[1]])
  assert.ok(page1.posts.every((p: { bookmarked: boolean }) => p.bookmarked))
  await server.services.fanout.drain()
  const get = (who: RegisteredUser | null, path: string) => server.request('GET', API + path, { token: who?.token }).then((res) => res.body.data)
  const flags = async (who: RegisteredUser | null) => {
    const pick = (posts: Array<{ id: number; bookmarked: boolean }>) => posts.find((p) => p.id === made[0])?.bookmarked
    return {
      detail: (await get(who, `/posts/detail/${made[0]}`)).post.bookmarked,
      'posts by user': pick((await get(who, `/posts/user/${ann.id}`)).posts),
      explore: pick((await get(who, '/posts/explore?limit=50')).posts),
      search: pick((await get(who, '/search/posts?q=zqsaved')).posts),
      ...(who ? { feed: pick((await get(who, '/posts/feed?limit=50')).posts) } : {}),
    }
  }
  assert.equal(await flags(bob), { detail: true, 'posts by user': true, explore: true, search: true, feed: true })
  assert.equal(await flags(ann), { detail: false, 'posts by user': false, explore: false, search: false, feed: false })
  assert.equal(await flags(null), { detail: false, 'posts by user': false, explore: false, search: false })
  // Nobody else's list shows them.
  assert.equal((await saved(cat)).posts, [])
  const unsaved = await unsave(bob, made[0])
  assert.equal([unsaved.body.message, unsaved.body.data], ['Post unsaved', { post_id: made[0], bookmarked: false }])
  assert.is((await unsave(bob, made[0])).status, 200, 'unsaving again changes nothing')
  assert.equal((await saved(bob)).posts.map((p: { id: number }) => p.id), [made[2], made[1]])
})

test('saved posts that become invisible are left out of the list, and come back when visible again', async () => {
  const [ann, bob, dan, eve, fay, gus, saver] = await Promise.all(['ann_i', 'bob_i', 'dan_i', 'eve_i', 'fay_i', 'gus_i', 'saver_i'].map((name) => registerUser(server, name)))
  const of = async (who: RegisteredUser, content: string) => (await post(server, who.token, { content })).id
  const posts = { madePrivate: await of(ann, 'a'), blocked: await of(bob, 'b'), suspended: await of(dan, 'd'), turnedPrivate: await of(eve, 'e'), deleted: await of(fay, 'f'), stays: await of(gus, 'g') }
  for (const id of Object.values(posts)) assert.is((await save(saver, id)).status, 200)
  const listed = async () => (await saved(saver, '?limit=50')).posts.map((p: { id: number }) => p.id).sort((a: number, b: number) => a - b)
  assert.equal(await listed(), Object.values(posts).sort((a, b) => a - b))
  await server.request('PUT', `${API}/posts/${posts.madePrivate}`, { token: ann.token, body: { is_public: false } })
  await server.request('POST', `${API}/user/block/${saver.id}`, { token: bob.token })
  await server.services.db.run(sql`update users set suspended_at = 1 where id = ${dan.id}`)
  await server.request('PUT', `${API}/user/update`, { token: eve.token, body: { is_private: true } })
  await server.request('DELETE', `${API}/posts/${posts.deleted}`, { token: fay.token })
  assert.equal(await listed(), [posts.stays])
  // Pages stay full: the hidden ones are left out before paging.
  assert.equal((await saved(saver, '?limit=1')).posts.map((p: { id: number }) => p.id), [posts.stays])
  assert.is((await saved(saver, '?limit=1')).has_more, false)
  // A saved post one cannot see any more can still be unsaved; saving it again cannot.
  assert.is((await unsave(saver, posts.turnedPrivate)).status, 200)
  assert.is((await save(saver, posts.turnedPrivate)).status, 404)
  assert.is((await unsave(saver, posts.turnedPrivate)).status, 404, 'neither saved nor visible: as if it did not exist')
  // Visible again: back in the list (the bookmark stayed).
  await server.services.db.run(sql`update users set suspended_at = null where id = ${dan.id}`)
  await followUser(server, saver.token, ann.id)
  assert.equal(await listed(), [posts.madePrivate, posts.suspended, posts.stays].sort((a, b) => a - b))
})

test('bad bookmarks: 401 without a token, 404 for a post that does not exist or is hidden, 400 for a bad id or page', async () => {
  const [ann, bob] = await Promise.all(['ann_x', 'bob_x'].map((name) => registerUser(server, name)))
  const hidden = await post(server, ann.token, { content: 'followers only', is_public: false })
  assert.is((await server.request('POST', `${API}/posts/${hidden.id}/bookmark`)).status, 401)
  assert.is((await server.request('GET', `${API}/posts/bookmarks`)).status, 401)
  assert.is((await save(bob, hidden.id)).status, 404)
  assert.is((await save(bob, 999999)).status, 404)
  assert.is((await unsave(bob, 999999)).status, 404)
  assert.is((await server.request('POST', `${API}/posts/abc/bookmark`, { token: bob.token })).status, 400)
  assert.is((await server.request('GET', `${API}/posts/bookmarks?page=0`, { token: bob.token })).status, 400)
})

test.run()
