/** Deleting and editing posts, deleting comments and stories: who may, what goes with them, which counters and files follow. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { SQLiteAsyncDialect } from 'drizzle-orm/sqlite-core'
import { deleteComment, deletePost, deleteStory, postTimelineRowsQuery, uploadReferencedQuery } from '../../src/server/domain/removal.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { filesOnDisk, solidImage, upload } from '../uploads/fixtures.js'
import { fanoutProgress, followUser, holdFanout, post, rawClient, timelineIdsOf } from './helpers.js'

const API = '/api/mobile'
const clock = manualClock(new Date('2026-05-01T10:00:00Z'))
let server: TestServer
let alice: RegisteredUser
let bob: RegisteredUser
let carol: RegisteredUser

test.before(async () => {
  server = await startTestServer({ clock: clock.clock })
  alice = await registerUser(server)
  bob = await registerUser(server)
  carol = await registerUser(server)
  await followUser(server, bob.token, alice.id)
})
test.after(() => server.close())

async function one(sqlText: string, ...args: (number | string)[]): Promise<number> {
  const result = await rawClient(server).execute({ sql: sqlText, args })
  return Number(Object.values(result.rows[0])[0])
}

const tagCount = (tag: string) => one('select coalesce((select posts_count from hashtags where tag = ?), -1)', tag)
const postsCount = (userId: number) => one('select posts_count from users where id = ?', userId)
const searchHits = (word: string) => one('select count(*) from posts_fts where posts_fts match ?', word)

/** An open report, written as the reports endpoint (another part of issue 13) stores one. */
async function report(reporter: RegisteredUser, targetType: string, targetId: number, targetUserId: number) {
  await rawClient(server).execute({
    sql: `insert into reports (reporter_id, target_type, target_id, target_user_id, reason, created_at) values (?, ?, ?, ?, 'spam', 0)`,
    args: [reporter.id, targetType, targetId, targetUserId],
  })
}

async function imageUpload(user: RegisteredUser, kind: 'post' | 'comment' | 'story') {
  const res = await upload(server, kind, user.token, await solidImage(24, 24, 'png'), 'p.png', 'image/png')
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.path as string
}

async function comment(user: RegisteredUser, postId: number, body: Record<string, unknown>) {
  const res = await server.request('POST', `${API}/interactions/comment/${postId}`, { token: user.token, body })
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.id as number
}

test('DELETE /posts/:id: the author deletes a post with its likes, comments, tags, notifications, search entry, timeline rows and files', async () => {
  const image = await imageUpload(alice, 'post')
  const created = await post(server, alice.token, { content: 'zebracrossing at dawn #gone #kept', image })
  const keeper = await post(server, carol.token, { content: 'still here #kept' })
  await server.services.fanout.drain()
  const commentImage = await imageUpload(bob, 'comment')
  await server.request('POST', `${API}/interactions/like/${created.id}`, { token: bob.token })
  await comment(bob, created.id, { content: 'lovely', image: commentImage })
  await report(bob, 'post', created.id, alice.id)
  assert.is(await postsCount(alice.id), 1)
  assert.is(await tagCount('gone'), 1)
  assert.is(await tagCount('kept'), 2)
  assert.is(await searchHits('zebracrossing'), 1)
  assert.ok((await timelineIdsOf(server, bob.id)).includes(created.id))
  assert.ok(filesOnDisk(server.dataDir).includes(image) && filesOnDisk(server.dataDir).includes(commentImage))

  const denied = await server.request('DELETE', `${API}/posts/${created.id}`, { token: bob.token })
  assert.is(denied.status, 403)
  assert.is(denied.body.message, 'You can only delete your own posts')

  const res = await server.request('DELETE', `${API}/posts/${created.id}`, { token: alice.token })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.equal([res.body.status, res.body.message, res.body.data], ['success', 'Post deleted', null])

  assert.is((await server.request('GET', `${API}/posts/detail/${created.id}`, { token: alice.token })).status, 404)
  assert.is(await postsCount(alice.id), 0)
  assert.is(await tagCount('gone'), -1, 'a tag no post uses any more goes')
  assert.is(await tagCount('kept'), 1)
  assert.is(await searchHits('zebracrossing'), 0)
  assert.not.ok((await timelineIdsOf(server, bob.id)).includes(created.id))
  assert.ok((await timelineIdsOf(server, carol.id)).includes(keeper.id))
  for (const table of ['likes', 'comments', 'post_hashtags', 'notifications']) {
    assert.is(await one(`select count(*) from ${table} where post_id = ?`, created.id), 0, table)
  }
  assert.is(await one(`select count(*) from reports where target_type = 'post' and target_id = ?`, created.id), 0)
  const files = filesOnDisk(server.dataDir)
  assert.not.ok(files.includes(image), 'the post image is gone')
  assert.not.ok(files.includes(commentImage), 'the comment image is gone')
  assert.is(await one('select count(*) from uploads where path in (?, ?)', image, commentImage), 0)

  const again = await server.request('DELETE', `${API}/posts/${created.id}`, { token: alice.token })
  assert.is(again.status, 404)
})

test('DELETE /posts/:id: 401 without a token, 404 for a missing or invisible post, 400 for a bad id', async () => {
  const hidden = await post(server, alice.token, { content: 'followers only', is_public: false })
  assert.is((await server.request('DELETE', `${API}/posts/${hidden.id}`)).status, 401)
  const invisible = await server.request('DELETE', `${API}/posts/${hidden.id}`, { token: carol.token })
  assert.is(invisible.status, 404)
  assert.is(invisible.body.message, 'Post not found')
  assert.is((await server.request('DELETE', `${API}/posts/${hidden.id}`, { token: bob.token })).status, 403, 'a follower sees it but is not the author')
  assert.is((await server.request('DELETE', `${API}/posts/999999`, { token: alice.token })).status, 404)
  assert.is((await server.request('DELETE', `${API}/posts/abc`, { token: alice.token })).status, 400)
  assert.is((await server.request('GET', `${API}/posts/detail/${hidden.id}`, { token: alice.token })).status, 200, 'nothing changed')
})

test('an image another post still uses stays until its last post goes', async () => {
  const image = await imageUpload(alice, 'post')
  const first = await post(server, alice.token, { content: 'one', image })
  const second = await post(server, alice.token, { content: 'two', image })
  await deletePost(server.services, first.id, { userId: alice.id })
  assert.ok(filesOnDisk(server.dataDir).includes(image))
  assert.is((await server.request('GET', '/' + image)).status, 200)
  await deletePost(server.services, second.id, { userId: alice.id })
  assert.not.ok(filesOnDisk(server.dataDir).includes(image))
})

test('a post deleted while pending fan-out never enters a timeline', async () => {
  const release = await holdFanout(server)
  let pending: { id: number }
  try {
    pending = await post(server, alice.token, { content: 'pending then gone' })
    assert.ok((await fanoutProgress(server)).cursor < pending.id)
    await deletePost(server.services, pending.id, { userId: alice.id })
  } finally {
    await release()
  }
  const later = await post(server, alice.token, { content: 'after' })
  await server.services.fanout.drain()
  const timeline = await timelineIdsOf(server, bob.id)
  assert.not.ok(timeline.includes(pending!.id))
  assert.ok(timeline.includes(later.id))
  assert.ok((await fanoutProgress(server)).cursor >= later.id)
  const feed = await server.request('GET', `${API}/posts/feed`, { token: bob.token })
  assert.not.ok(feed.body.data.posts.some((p: { id: number }) => p.id === pending!.id))
})

test('deleting the newest post, already fanned out, leaves the next post to be fanned out (ids are never reused)', async () => {
  const newest = await post(server, alice.token, { content: 'newest' })
  await server.services.fanout.drain()
  assert.is((await fanoutProgress(server)).cursor, newest.id)
  await deletePost(server.services, newest.id, { userId: alice.id })
  const next = await post(server, alice.token, { content: 'next' })
  assert.ok(next.id > newest.id)
  await server.services.fanout.drain()
  assert.ok((await timelineIdsOf(server, bob.id)).includes(next.id))
})

test('a moderator removes any post; a missing one is a 404', async () => {
  const target = await post(server, carol.token, { content: 'moderated' })
  await report(bob, 'post', target.id, carol.id)
  await deletePost(server.services, target.id, { moderator: 'ops' })
  assert.is((await server.request('GET', `${API}/posts/detail/${target.id}`, { token: carol.token })).status, 404)
  assert.is(await one(`select count(*) from reports where target_type = 'post' and target_id = ?`, target.id), 1, 'left for the moderation record')
  const missing = await deletePost(server.services, target.id, { moderator: 'ops' }).then(() => null, (error: Error) => error)
  assert.is(missing?.message, 'Post not found')
})

test('PUT /posts/:id: the author edits text and visibility; tags, search and edited_at follow', async () => {
  const created = await post(server, alice.token, { content: 'quokkasmile #before' })
  assert.is(created.edited_at, null)
  assert.is(await tagCount('before'), 1)
  clock.advance(60_000)
  const res = await server.request('PUT', `${API}/posts/${created.id}`, { token: alice.token, body: { content: 'wombatgrin #after #After' } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(res.body.message, 'Post updated')
  assert.is(res.body.data.content, 'wombatgrin #after #After')
  assert.is(res.body.data.edited_at, '2026-05-01 10:01:00')
  assert.is(await tagCount('before'), -1)
  assert.is(await tagCount('after'), 1)
  assert.is(await searchHits('quokkasmile'), 0)
  assert.is(await searchHits('wombatgrin'), 1)
  const detail = await server.request('GET', `${API}/posts/detail/${created.id}`, { token: carol.token })
  assert.is(detail.body.data.post.edited_at, '2026-05-01 10:01:00')

  const hidden = await server.request('PUT', `${API}/posts/${created.id}`, { token: alice.token, body: { is_public: false } })
  assert.is(hidden.status, 200)
  assert.is(hidden.body.data.is_public, false)
  assert.is(await tagCount('after'), 0, 'posts_count counts public posts only')
  assert.is(await searchHits('wombatgrin'), 0)
  assert.is((await server.request('GET', `${API}/posts/detail/${created.id}`, { token: carol.token })).status, 404)
  assert.is((await server.request('GET', `${API}/posts/detail/${created.id}`, { token: bob.token })).status, 200, 'a follower still sees it')

  const back = await server.request('PUT', `${API}/posts/${created.id}`, { token: alice.token, body: { is_public: true } })
  assert.is(back.body.data.is_public, true)
  assert.is(await tagCount('after'), 1)
  assert.is(await searchHits('wombatgrin'), 1)
})

test('PUT /posts/:id: 401, 403, 404 and 400 change nothing', async () => {
  const created = await post(server, alice.token, { content: 'as written' })
  const path = `${API}/posts/${created.id}`
  assert.is((await server.request('PUT', path, { body: { content: 'x' } })).status, 401)
  const forbidden = await server.request('PUT', path, { token: bob.token, body: { content: 'x' } })
  assert.is(forbidden.status, 403)
  assert.is(forbidden.body.message, 'You can only edit your own posts')
  assert.is((await server.request('PUT', `${API}/posts/999999`, { token: alice.token, body: { content: 'x' } })).status, 404)
  for (const body of [{}, { content: 'x'.repeat(2201) }, { is_public: 'yes' }, { content: 5 }, { content: '   ' }]) {
    const res = await server.request('PUT', path, { token: alice.token, body })
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.body.status, 'error')
  }
  const detail = await server.request('GET', `${API}/posts/detail/${created.id}`, { token: alice.token })
  assert.is(detail.body.data.post.content, 'as written')
  assert.is(detail.body.data.post.edited_at, null)
})

test('DELETE /interactions/comment/:id: the commenter or the post author; count, notification and image follow', async () => {
  const target = await post(server, alice.token, { content: 'comment on me' })
  const image = await imageUpload(bob, 'comment')
  const byBob = await comment(bob, target.id, { content: 'first', image })
  const byCarol = await comment(carol, target.id, { content: 'second' })
  const notes = () => one(`select count(*) from notifications where user_id = ? and type = 'comment' and post_id = ?`, alice.id, target.id)
  const commentsCount = () => one('select comments_count from posts where id = ?', target.id)
  assert.is(await notes(), 2)
  assert.is(await commentsCount(), 2)

  const path = (id: number | string) => `${API}/interactions/comment/${id}`
  assert.is((await server.request('DELETE', path(byBob))).status, 401)
  const forbidden = await server.request('DELETE', path(byBob), { token: carol.token })
  assert.is(forbidden.status, 403)
  assert.is(forbidden.body.message, 'You can only delete your own comments or comments on your posts')
  assert.is((await server.request('DELETE', path(999999), { token: bob.token })).status, 404)
  assert.is((await server.request('DELETE', path('x'), { token: bob.token })).status, 400)
  assert.is(await commentsCount(), 2)

  const own = await server.request('DELETE', path(byBob), { token: bob.token })
  assert.is(own.status, 200, JSON.stringify(own.body))
  assert.equal([own.body.message, own.body.data], ['Comment deleted', null])
  assert.is(await commentsCount(), 1)
  assert.is(await notes(), 1)
  assert.not.ok(filesOnDisk(server.dataDir).includes(image))

  const byAuthor = await server.request('DELETE', path(byCarol), { token: alice.token })
  assert.is(byAuthor.status, 200)
  assert.is(await commentsCount(), 0)
  assert.is(await notes(), 0)
  const detail = await server.request('GET', `${API}/posts/detail/${target.id}`, { token: alice.token })
  assert.equal([detail.body.data.post.comments_count, detail.body.data.comments.length], [0, 0])
})

test('a comment on a post the caller cannot see is a 404', async () => {
  const hidden = await post(server, alice.token, { content: 'followers only', is_public: false })
  const id = await comment(bob, hidden.id, { content: 'I follow' })
  assert.is((await server.request('DELETE', `${API}/interactions/comment/${id}`, { token: carol.token })).status, 404)
  await deleteComment(server.services, id, { moderator: 'ops' })
  assert.is(await one('select comments_count from posts where id = ?', hidden.id), 0)
})

test('DELETE /stories/:id: the author deletes a story with its views, notifications and files (a video with its poster)', async () => {
  const media = await imageUpload(alice, 'story')
  const created = await server.request('POST', `${API}/stories/create`, { token: alice.token, body: { content_type: 'image', media_url: media } })
  assert.is(created.status, 201, JSON.stringify(created.body))
  const storyId = created.body.data.id as number
  assert.is((await server.request('GET', `${API}/stories/view/${storyId}`, { token: bob.token })).status, 200)
  assert.is(await one('select count(*) from notifications where story_id = ?', storyId), 1)

  const path = (id: number | string) => `${API}/stories/${id}`
  assert.is((await server.request('DELETE', path(storyId))).status, 401)
  const forbidden = await server.request('DELETE', path(storyId), { token: bob.token })
  assert.is(forbidden.status, 403)
  assert.is(forbidden.body.message, 'You can only delete your own stories')
  assert.is((await server.request('DELETE', path(999999), { token: alice.token })).status, 404)
  assert.is((await server.request('DELETE', path('nope'), { token: alice.token })).status, 400)

  const res = await server.request('DELETE', path(storyId), { token: alice.token })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.equal([res.body.message, res.body.data], ['Story deleted', null])
  assert.is(await one('select count(*) from story_views where story_id = ?', storyId), 0)
  assert.is(await one('select count(*) from notifications where story_id = ?', storyId), 0)
  assert.not.ok(filesOnDisk(server.dataDir).includes(media))
  assert.is((await server.request('GET', `${API}/stories/view/${storyId}`, { token: bob.token })).status, 404)

  // A video's row names its poster frame (uploads.poster); both files go with the story.
  const video = 'uploads/stories/videoclip0001.mp4'
  const poster = 'uploads/stories/videoposter01.jpg'
  for (const [key, mime] of [[video, 'video/mp4'], [poster, 'image/jpeg']]) {
    await (await server.services.storage.stage(key, Buffer.from('bytes'))).commit()
    await rawClient(server).execute({
      sql: 'insert into uploads (user_id, kind, path, mime, size, created_at, poster) values (?, ?, ?, ?, 5, 0, ?)',
      args: [alice.id, 'stories', key, mime, key === video ? poster : null],
    })
  }
  const clip = await server.request('POST', `${API}/stories/create`, { token: alice.token, body: { content_type: 'video', media_url: video } })
  assert.is(clip.status, 201, JSON.stringify(clip.body))
  await deleteStory(server.services, clip.body.data.id, { userId: alice.id })
  const files = filesOnDisk(server.dataDir)
  assert.not.ok(files.includes(video) || files.includes(poster), files.join(','))
  assert.is(await one('select count(*) from uploads where path in (?, ?)', video, poster), 0)
})

test('an expired story: its author may still delete it, anyone else gets a 404', async () => {
  const created = await server.request('POST', `${API}/stories/create`, { token: alice.token, body: { content_type: 'text', text_content: 'brief' } })
  const storyId = created.body.data.id as number
  clock.advance(25 * 3600_000)
  assert.is((await server.request('DELETE', `${API}/stories/${storyId}`, { token: bob.token })).status, 404)
  assert.is((await server.request('DELETE', `${API}/stories/${storyId}`, { token: alice.token })).status, 200)
  assert.is(await one('select count(*) from stories where id = ?', storyId), 0)
})

test('a deletion finds its timeline rows and the references to a file through indexes, never a scan of a whole table', async () => {
  const dialect = new SQLiteAsyncDialect()
  for (const statement of [postTimelineRowsQuery({ id: 1, authorId: alice.id, createdAt: 0 }), uploadReferencedQuery(alice.id, 'uploads/posts/x.jpg')]) {
    const { sql, params } = dialect.sqlToQuery(statement)
    const plan = (await rawClient(server).execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })).rows.map((row) => String(row.detail))
    assert.ok(plan.length > 0)
    assert.not.ok(plan.some((step) => /^SCAN (timelines|posts|comments|stories|uploads|users|follows)\b/.test(step)), plan.join('\n'))
  }
})

test.run()
