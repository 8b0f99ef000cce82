/**
 * Every object that shows an image carries its width, height and BlurHash (issue 13), from what
 * the upload recorded, and every list pays one indexed lookup per page for them, whatever its length.
 */
import { createClient, type Client } from '@libsql/client'
import { drizzle } from 'drizzle-orm/libsql'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as schema from '../../src/server/db/schema.js'
import { getExplore } from '../../src/server/domain/explore.js'
import { listFollows } from '../../src/server/domain/follows.js'
import { listNotifications } from '../../src/server/domain/notifications.js'
import { getPostDetail } from '../../src/server/domain/comments.js'
import { getFeed, getPostsByUser } from '../../src/server/domain/posts.js'
import { searchPosts, searchUsers } from '../../src/server/domain/search.js'
import { storyFeed } from '../../src/server/domain/stories.js'
import { databaseUrlOf, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { recordedVideo, solidImage, upload } from '../uploads/fixtures.js'
import { followUser, seedUpload } from './helpers.js'

const API = '/api/mobile'
let server: TestServer
test.before(async () => void (server = await startTestServer()))
test.after(() => server.close())

interface Meta {
  width: number | null
  height: number | null
  blurhash: string | null
}
const NONE: Meta = { width: null, height: null, blurhash: null }

/** The siblings of image field `prefix` on `item`. */
const metaOf = (item: any, prefix: string): Meta => ({ width: item[`${prefix}_width`], height: item[`${prefix}_height`], blurhash: item[`${prefix}_blurhash`] })

async function uploaded(user: RegisteredUser, route: string, bytes: Buffer, name: string) {
  const res = await upload(server, route, user.token, bytes, name)
  assert.is(res.status, 201, JSON.stringify(res.body))
  const { path: stored, width, height, blurhash, poster_path } = res.body.data
  return { path: stored as string, meta: { width, height, blurhash } as Meta, poster: poster_path as string | undefined }
}

async function get(route: string, user?: RegisteredUser) {
  const res = await server.request('GET', `${API}${route}`, { token: user?.token })
  assert.is(res.status, 200, `${route}: ${JSON.stringify(res.body)}`)
  return res.body.data
}

async function send(method: string, route: string, user: RegisteredUser, body?: unknown, status = 200) {
  const res = await server.request(method, `${API}${route}`, { token: user.token, body })
  assert.is(res.status, status, `${method} ${route}: ${JSON.stringify(res.body)}`)
  return res.body.data
}

test('posts, comments, profiles, user lists, stories, notifications and sessions carry each image field’s width, height and BlurHash', async () => {
  const alice = await registerUser(server, 'media_alice')
  const bob = await registerUser(server, 'media_bob')
  const carol = await registerUser(server, 'media_carol')

  const aliceAvatar = await uploaded(alice, 'avatar', await solidImage(300, 200, 'png'), 'me.png')
  assert.equal([aliceAvatar.meta.width, aliceAvatar.meta.height], [200, 200])
  const bobAvatar = await uploaded(bob, 'avatar', await solidImage(64, 64, 'jpeg'), 'bob.jpg')
  const photo = await uploaded(alice, 'post', await solidImage(640, 480, 'jpeg'), 'sunset.jpg')
  // Carol's avatar was recorded before uploads kept metadata: its fields answer null.
  const legacy = await seedUpload(server, carol.id, 'avatars')
  await send('PUT', '/user/update', carol, { avatar: legacy })

  const created = await send('POST', '/posts/create', alice, { content: 'Sunset over the bay #mediatest', image: photo.path }, 201)
  assert.equal(metaOf(created, 'image'), photo.meta)
  assert.equal(metaOf(created, 'avatar'), aliceAvatar.meta)
  const textOnly = await send('POST', '/posts/create', carol, { content: 'no picture #mediatest' }, 201)
  assert.equal([metaOf(textOnly, 'image'), metaOf(textOnly, 'avatar')], [NONE, NONE], 'an empty field and a file without metadata: null')

  const followed = await send('POST', `/user/follow/${alice.id}`, bob)
  assert.equal(metaOf(followed, 'avatar'), aliceAvatar.meta, 'the follow answer is the profile')
  await followUser(server, alice.token, bob.id)
  await followUser(server, bob.token, carol.id)
  await send('POST', `/interactions/like/${created.id}`, bob)
  const commentImage = await uploaded(bob, 'comment', await solidImage(100, 50, 'webp'), 'c.webp')
  const comment = await send('POST', `/interactions/comment/${created.id}`, bob, { content: 'lovely', image: commentImage.path }, 201)
  assert.equal([metaOf(comment, 'image'), metaOf(comment, 'avatar')], [commentImage.meta, bobAvatar.meta])

  const postOf = (posts: any[]) => posts.find((p) => p.id === created.id)
  const assertPost = (p: any, where: string) => {
    assert.ok(p, `${where}: the post is listed`)
    assert.equal([metaOf(p, 'image'), metaOf(p, 'avatar')], [photo.meta, aliceAvatar.meta], where)
  }
  assertPost(postOf((await get('/posts/feed', bob)).posts), 'feed')
  assertPost(postOf((await get(`/posts/user/${alice.id}`)).posts), 'posts by user')
  assertPost(postOf((await get('/posts/explore')).posts), 'explore')
  assertPost(postOf((await get('/search/posts?q=sunset')).posts), 'post search')
  assertPost(postOf((await get('/search/all?q=sunset')).posts), 'search all')
  const detail = await get(`/posts/detail/${created.id}`)
  assertPost(detail.post, 'detail')
  assert.equal([metaOf(detail.comments[0], 'image'), metaOf(detail.comments[0], 'avatar')], [commentImage.meta, bobAvatar.meta], 'detail comments')
  // The siblings follow their field, so a reader of the JSON sees them together.
  const keys = Object.keys(detail.post)
  assert.equal(keys.slice(keys.indexOf('image'), keys.indexOf('image') + 4), ['image', 'image_width', 'image_height', 'image_blurhash'])

  const profile = await get(`/user/profile/${alice.id}`, bob)
  assert.equal(metaOf(profile, 'avatar'), aliceAvatar.meta)
  assert.equal(metaOf(await get(`/user/profile/${carol.id}`, bob), 'avatar'), NONE)
  const updated = await send('PUT', '/user/update', alice, { bio: 'photos' })
  assert.equal(metaOf(updated, 'avatar'), aliceAvatar.meta)
  const userOf = (users: any[], id: number) => users.find((u) => u.id === id)
  assert.equal(metaOf(userOf((await get(`/user/followers/${alice.id}`)).users, bob.id), 'avatar'), bobAvatar.meta, 'followers')
  assert.equal(metaOf(userOf((await get(`/user/following/${bob.id}`)).users, alice.id), 'avatar'), aliceAvatar.meta, 'following')
  assert.equal(metaOf(userOf((await get(`/user/following/${bob.id}`)).users, carol.id), 'avatar'), NONE, 'following, legacy avatar')
  assert.equal(metaOf(userOf((await get('/search/users?q=media_alice')).users, alice.id), 'avatar'), aliceAvatar.meta, 'user search')
  assert.equal(metaOf(userOf((await get('/search/all?q=media_alice')).users, alice.id), 'avatar'), aliceAvatar.meta, 'search all users')

  const login = await server.request('POST', `${API}/auth/login`, { body: { email: 'media_alice@example.com', password: 'correct horse' } })
  assert.equal(metaOf(login.body.data.user, 'avatar'), aliceAvatar.meta, 'the session user')
  const refreshed = await send('POST', '/auth/refresh', bob)
  assert.equal(metaOf(refreshed.user, 'avatar'), bobAvatar.meta)
  bob.token = refreshed.token

  const still = await uploaded(alice, 'story', await solidImage(90, 160, 'png'), 'tall.png')
  const imageStory = await send('POST', '/stories/create', alice, { content_type: 'image', media_url: still.path }, 201)
  assert.equal([metaOf(imageStory, 'media'), imageStory.poster_url, metaOf(imageStory, 'avatar')], [still.meta, null, aliceAvatar.meta])
  const video = await uploaded(alice, 'story', await recordedVideo('mp4'), 'clip.mp4')
  const videoStory = await send('POST', '/stories/create', alice, { content_type: 'video', media_url: video.path }, 201)
  assert.equal(metaOf(videoStory, 'media'), video.meta)
  assert.equal(video.meta.width, 320)
  assert.is(videoStory.poster_url, video.poster, 'a video story names its poster frame')
  const viewed = await get(`/stories/view/${videoStory.id}`, bob)
  assert.equal([metaOf(viewed, 'media'), viewed.poster_url, metaOf(viewed, 'avatar')], [video.meta, video.poster, aliceAvatar.meta])
  const text = await send('POST', '/stories/create', carol, { content_type: 'text', text_content: 'hi' }, 201)
  assert.equal([metaOf(text, 'media'), text.poster_url], [NONE, null])
  const groups = await get('/stories/feed', bob)
  assert.equal(metaOf(groups.find((g: any) => g.user_id === alice.id), 'avatar'), aliceAvatar.meta, 'story feed')
  assert.equal(metaOf(groups.find((g: any) => g.user_id === carol.id), 'avatar'), NONE, 'story feed, legacy avatar')

  const { notifications } = await get('/notifications/list', alice)
  const byType = (type: string) => notifications.find((n: any) => n.type === type && n.actor_id === bob.id)
  for (const type of ['like', 'comment']) {
    assert.equal([metaOf(byType(type), 'actor_avatar'), metaOf(byType(type), 'post_image')], [bobAvatar.meta, photo.meta], type)
  }
  assert.equal([metaOf(byType('follow'), 'actor_avatar'), metaOf(byType('follow'), 'post_image')], [bobAvatar.meta, NONE], 'follow: no post')
  assert.equal(metaOf(byType('story_view'), 'actor_avatar'), bobAvatar.meta, 'story view')
})

/** A drizzle database over its own connection to the server's file, recording every statement it runs. */
function recordingDb(): { db: any; statements: string[]; client: Client } {
  const client = createClient({ url: databaseUrlOf(server) })
  const statements: string[] = []
  const recording = new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key, target)
      if (key === 'execute') {
        return (statement: string | { sql: string }) => {
          statements.push(typeof statement === 'string' ? statement : statement.sql)
          return target.execute(statement as never)
        }
      }
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { db: drizzle(recording, { schema }), statements, client }
}

test('each list looks up its page’s media in one query on uploads, whatever the page’s length', async () => {
  const owner = await registerUser(server, 'media_owner')
  const reader = await registerUser(server, 'media_reader')
  await uploaded(owner, 'avatar', await solidImage(40, 40, 'png'), 'a.png')
  await uploaded(reader, 'avatar', await solidImage(40, 40, 'png'), 'b.png')
  await followUser(server, reader.token, owner.id)
  await followUser(server, owner.token, reader.id)
  // Ten posts, each with an image of its own, each liked and commented (with an image) by the reader.
  let last = 0
  for (let i = 0; i < 10; i++) {
    const image = await uploaded(owner, 'post', await solidImage(30 + i, 20, 'png'), 'p.png')
    last = (await send('POST', '/posts/create', owner, { content: `harbour view ${i} #mediapage`, image: image.path }, 201)).id
    await send('POST', `/interactions/like/${last}`, reader)
    const c = await uploaded(reader, 'comment', await solidImage(20, 10 + i, 'png'), 'c.png')
    await send('POST', `/interactions/comment/${last}`, reader, { content: `nice ${i}`, image: c.path }, 201)
  }
  const story = await uploaded(owner, 'story', await solidImage(20, 40, 'png'), 's.png')
  await send('POST', '/stories/create', owner, { content_type: 'image', media_url: story.path }, 201)
  await get('/posts/explore')

  const now = new Date()
  const lists: Array<[string, (dbs: { reads: any; scans: any }, limit: number) => Promise<unknown>]> = [
    ['feed', (dbs, limit) => getFeed(dbs, reader.id, { page: 1, limit })],
    ['posts by user', (dbs, limit) => getPostsByUser(dbs.reads, owner.id, reader.id, { page: 1, limit })],
    ['detail and comments', (dbs, limit) => getPostDetail(dbs, reader.id, { post_id: last, page: 1, limit })],
    ['explore', (dbs, limit) => getExplore(dbs, reader.id, now, { page: 1, limit })],
    ['followers', (dbs) => listFollows(dbs, 'followers', owner.id, reader.id, { page: 1, limit: 20 })],
    ['notifications', (dbs, limit) => listNotifications(dbs, owner.id, { page: 1, limit, unreadOnly: false })],
    ['post search', (dbs, limit) => searchPosts(dbs, 'harbour', reader.id, limit, now)],
    ['user search', (dbs, limit) => searchUsers(dbs.scans, 'media_', reader.id, limit)],
    ['story feed', (dbs) => storyFeed(dbs.reads, reader.id, now)],
  ]
  for (const [name, run] of lists) {
    const counts: number[] = []
    for (const limit of [2, 8]) {
      const { db, statements, client } = recordingDb()
      try {
        const answer = JSON.stringify(await run({ reads: db, scans: db }, limit))
        assert.match(answer, /_blurhash":"[^"]+"/, `${name}: the answer carries a BlurHash`)
        const lookups = statements.filter((sql) => /\bfrom "uploads"/i.test(sql))
        assert.is(lookups.length, 1, `${name} (limit ${limit}): one media lookup\n${lookups.join('\n')}`)
        counts.push(statements.length)
      } finally {
        client.close()
      }
    }
    assert.is(counts[0], counts[1], `${name}: as many statements for a page of 8 as for a page of 2`)
  }
})

test('the media lookup is served by the unique index on uploads.path', async () => {
  const client = createClient({ url: databaseUrlOf(server) })
  try {
    const plan = await client.execute({
      sql: `explain query plan select "path", "width", "height", "blurhash", "poster" from "uploads" where "uploads"."path" in (select value from json_each(?))`,
      args: ['["uploads/posts/a.png"]'],
    })
    const details = plan.rows.map((row) => String(row.detail)).join('\n')
    assert.match(details, /SEARCH uploads USING INDEX uploads_path_idx \(path=\?\)/, details)
    assert.not.match(details, /SCAN uploads/, details)
  } finally {
    client.close()
  }
})

test.run()
