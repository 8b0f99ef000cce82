import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { stories } from '../../src/server/db/schema.js'
import { storyFeedQuery } from '../../src/server/domain/stories.js'
import { manualClock, registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { API, follow, HOUR, queryPlan, seedUpload, type User } from './stories-notifications-fixtures.js'

function createStory(server: TestServer, user: User, body: Record<string, unknown>) {
  return server.request('POST', `${API}/stories/create`, { token: user.token, body })
}
async function textStory(server: TestServer, user: User, extra: Record<string, unknown> = {}) {
  const res = await createStory(server, user, { content_type: 'text', text_content: 'hello', ...extra })
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.id as number
}
const feed = (server: TestServer, user: User) => server.request('GET', `${API}/stories/feed`, { token: user.token })
const view = (server: TestServer, user: User, id: number | string) => server.request('GET', `${API}/stories/view/${id}`, { token: user.token })
async function storyCount(server: TestServer) {
  return (await server.services.db.select({ id: stories.id }).from(stories)).length
}
async function notificationsOf(server: TestServer, user: User) {
  const res = await server.request('GET', `${API}/notifications/list`, { token: user.token })
  assert.is(res.status, 200)
  return res.body.data.notifications as any[]
}

test('a text story is created with the spec fields, documented defaults and a 24-hour expiry', async () => {
  const clock = manualClock(new Date('2026-03-01T10:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  const alice = await registerUser(server)
  const res = await createStory(server, alice, { content_type: 'text', text_content: '  Good morning  ', background_color: '#ff8800' })
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  const story = res.body.data
  assert.equal(story, {
    id: story.id,
    content_type: 'text',
    media_url: '',
    media_alt: '',
    media_width: null,
    media_height: null,
    media_blurhash: null,
    poster_url: null,
    text_content: 'Good morning',
    mentions: [],
    background_color: '#FF8800',
    text_color: '#FFFFFF',
    font_family: '',
    font_size: 24,
    text_alignment: 'center',
    duration: 5,
    privacy_type: 'public',
    views_count: 0,
    created_at: '2026-03-01 10:00:00',
    expires_at: '2026-03-02 10:00:00',
    user_id: alice.id,
    username: alice.username,
    full_name: `Name ${alice.username}`,
    avatar: '',
    avatar_width: null,
    avatar_height: null,
    avatar_blurhash: null,
  })
  const all = await createStory(server, alice, {
    content_type: 'text',
    text_content: 'styled',
    background_color: '#000000',
    text_color: '#abcdef',
    font_family: 'Inter',
    font_size: 40,
    text_alignment: 'left',
    duration: 10,
    privacy_type: 'followers',
  })
  assert.is(all.status, 201)
  assert.equal(
    [all.body.data.text_color, all.body.data.font_family, all.body.data.font_size, all.body.data.text_alignment, all.body.data.duration, all.body.data.privacy_type],
    ['#ABCDEF', 'Inter', 40, 'left', 10, 'followers'],
  )
  await server.close()
})

test('invalid story input is a 400 with a clear message and creates nothing', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  const otherKind = await seedUpload(server, alice.id, 'image/jpeg', 'posts')
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no content_type', { text_content: 'x' }, /content_type/],
    ['unknown content_type', { content_type: 'audio', text_content: 'x' }, /content_type must be one of text, image, video/],
    ['text without text', { content_type: 'text' }, /text_content is required/],
    ['blank text', { content_type: 'text', text_content: '   ' }, /text_content must not be blank/],
    ['text over 500', { content_type: 'text', text_content: 'x'.repeat(501) }, /at most 500/],
    ['text with media', { content_type: 'text', text_content: 'x', media_url: 'uploads/stories/abcdefgh.jpg' }, /media_url is only for image and video/],
    ['colour name', { content_type: 'text', text_content: 'x', background_color: 'red' }, /background_color must be a colour in #RRGGBB/],
    ['short colour', { content_type: 'text', text_content: 'x', text_color: '#fff' }, /text_color must be a colour/],
    ['colour not hex', { content_type: 'text', text_content: 'x', text_color: '#GGGGGG' }, /text_color/],
    ['font too small', { content_type: 'text', text_content: 'x', font_size: 2 }, /font_size must be between 8 and 96/],
    ['font too big', { content_type: 'text', text_content: 'x', font_size: 500 }, /font_size must be between/],
    ['font not whole', { content_type: 'text', text_content: 'x', font_size: 12.5 }, /font_size must be a whole number/],
    ['font not a number', { content_type: 'text', text_content: 'x', font_size: 'big' }, /font_size must be a number/],
    ['duration zero', { content_type: 'text', text_content: 'x', duration: 0 }, /duration must be between 1 and 60/],
    ['duration too long', { content_type: 'text', text_content: 'x', duration: 61 }, /duration must be between/],
    ['bad alignment', { content_type: 'text', text_content: 'x', text_alignment: 'middle' }, /text_alignment must be one of left, center, right/],
    ['bad privacy', { content_type: 'text', text_content: 'x', privacy_type: 'friends' }, /privacy_type must be one of followers, public/],
    ['long font family', { content_type: 'text', text_content: 'x', font_family: 'f'.repeat(65) }, /font_family must be at most 64/],
    ['image without media', { content_type: 'image' }, /media_url is required for an image story/],
    ['video without media', { content_type: 'video', media_url: '' }, /media_url is required for an video story|media_url is required/],
    ['media outside uploads', { content_type: 'image', media_url: '/etc/passwd' }, /media_url: must be a path returned by an upload/],
    ['media traversal', { content_type: 'image', media_url: 'uploads/stories/../../plaza.db' }, /must be a path returned by an upload/],
    ['media of another kind', { content_type: 'image', media_url: otherKind }, /must be an upload of kind stories/],
    ['media never uploaded', { content_type: 'image', media_url: 'uploads/stories/neveruploaded1.jpg' }, /is not one of your uploads/],
  ]
  for (const [name, body, message] of cases) {
    const res = await createStory(server, alice, body)
    assert.is(res.status, 400, `${name}: ${JSON.stringify(res.body)}`)
    assert.is(res.body.status, 'error', name)
    assert.is(res.body.data, null, name)
    assert.match(res.body.message, message, name)
  }
  const notJson = await server.request('POST', `${API}/stories/create`, { token: alice.token, raw: '{oops', headers: { 'content-type': 'application/json' } })
  assert.is(notJson.status, 400)
  assert.is(await storyCount(server), 0)
  await server.close()
})

test('image and video stories need the caller\'s own upload whose type matches content_type', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  const photo = await seedUpload(server, alice.id, 'image/jpeg')
  const clip = await seedUpload(server, alice.id, 'video/mp4')
  const bobsPhoto = await seedUpload(server, bob.id, 'image/png')

  const image = await createStory(server, alice, { content_type: 'image', media_url: photo, text_content: 'caption', duration: 7 })
  assert.is(image.status, 201, JSON.stringify(image.body))
  assert.equal([image.body.data.content_type, image.body.data.media_url, image.body.data.text_content, image.body.data.duration], ['image', photo, 'caption', 7])
  const video = await createStory(server, alice, { content_type: 'video', media_url: clip, duration: 30, text_content: null })
  assert.is(video.status, 201, JSON.stringify(video.body))
  assert.equal([video.body.data.content_type, video.body.data.media_url, video.body.data.text_content], ['video', clip, null])

  const notMine = await createStory(server, alice, { content_type: 'image', media_url: bobsPhoto })
  assert.is(notMine.status, 400)
  assert.match(notMine.body.message, /not one of your uploads/)
  const videoAsImage = await createStory(server, alice, { content_type: 'image', media_url: clip })
  assert.is(videoAsImage.status, 400)
  assert.match(videoAsImage.body.message, /media_url is a video \(video\/mp4\); content_type must match/)
  const imageAsVideo = await createStory(server, alice, { content_type: 'video', media_url: photo })
  assert.is(imageAsVideo.status, 400)
  assert.match(imageAsVideo.body.message, /media_url is an image/)
  assert.is(await storyCount(server), 2)
  await server.close()
})

test('an image story from a real POST /upload/story upload, end to end', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366ff' } }).png().toBuffer()
  const form = new FormData()
  form.append('file', new Blob([png], { type: 'image/png' }), 'story.png')
  const uploaded = await server.request('POST', `${API}/upload/story`, { token: alice.token, raw: form })
  assert.ok(uploaded.status === 200 || uploaded.status === 201, JSON.stringify(uploaded.body)) // the upload's own status is pinned by its tests
  const path = uploaded.body.data.path as string
  assert.match(path, /^uploads\/stories\//)

  const asVideo = await createStory(server, alice, { content_type: 'video', media_url: path })
  assert.is(asVideo.status, 400)
  const story = await createStory(server, alice, { content_type: 'image', media_url: path })
  assert.is(story.status, 201, JSON.stringify(story.body))
  assert.is(story.body.data.media_url, path)
  const file = await server.request('GET', `/${path}`)
  assert.is(file.status, 200)
  await server.close()
})

test('every story endpoint needs a valid token', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  const id = await textStory(server, alice)
  for (const [method, path, body] of [
    ['POST', '/stories/create', { content_type: 'text', text_content: 'x' }],
    ['GET', '/stories/feed', undefined],
    ['GET', `/stories/view/${id}`, undefined],
  ] as const) {
    const anonymous = await server.request(method, API + path, { body })
    assert.is(anonymous.status, 401, path)
    assert.is(anonymous.body.status, 'error')
    const forged = await server.request(method, API + path, { body, token: 'plz_forged' })
    assert.is(forged.status, 401, path)
  }
  assert.is(await storyCount(server), 1)
  // PUT, not DELETE: DELETE /stories/{story_id} exists, so DELETE /stories/feed is a 400 (a story id must be a number).
  const wrongMethod = await server.request('PUT', `${API}/stories/feed`, { token: alice.token })
  assert.is(wrongMethod.status, 405)
  await server.close()
})

test('the feed groups active stories by author: own group first, then newest; followed users only', async () => {
  const clock = manualClock(new Date('2026-03-01T00:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  const [me, bob, carol, dave] = [await registerUser(server), await registerUser(server), await registerUser(server), await registerUser(server)]
  await follow(server, me, bob)
  await follow(server, me, carol)
  await follow(server, dave, me) // dave follows me, not the other way round

  const mine = await textStory(server, me) // 00:00, my only story, older than the others
  clock.advance(HOUR)
  const bob1 = await textStory(server, bob) // 01:00
  clock.advance(HOUR)
  const carol1 = await textStory(server, carol, { privacy_type: 'followers' }) // 02:00, visible: I follow carol
  clock.advance(HOUR)
  const bob2 = await textStory(server, bob) // 03:00: bob's group is now the newest
  await textStory(server, dave) // public, but I don't follow dave
  clock.advance(HOUR)

  const res = await feed(server, me)
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  const noAvatar = { avatar_width: null, avatar_height: null, avatar_blurhash: null }
  assert.equal(res.body.data, [
    { user_id: me.id, username: me.username, full_name: `Name ${me.username}`, avatar: '', ...noAvatar, is_verified: false, story_count: 1, story_ids: [mine], latest_story: '2026-03-01 00:00:00' },
    { user_id: bob.id, username: bob.username, full_name: `Name ${bob.username}`, avatar: '', ...noAvatar, is_verified: false, story_count: 2, story_ids: [bob1, bob2], latest_story: '2026-03-01 03:00:00' },
    { user_id: carol.id, username: carol.username, full_name: `Name ${carol.username}`, avatar: '', ...noAvatar, is_verified: false, story_count: 1, story_ids: [carol1], latest_story: '2026-03-01 02:00:00' },
  ])

  // Someone who follows nobody and has no stories sees an empty array, not an error.
  const loner = await registerUser(server)
  const empty = await feed(server, loner)
  assert.is(empty.status, 200)
  assert.equal(empty.body.data, [])
  await server.close()
})

test('stories vanish 24 hours after creation from the feed, the profile count and the view', async () => {
  const clock = manualClock(new Date('2026-03-01T12:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  const early = await textStory(server, alice)
  clock.advance(HOUR)
  const later = await textStory(server, alice)

  const profile = async () => (await server.request('GET', `${API}/user/profile/${alice.id}`, { token: bob.token })).body.data.active_stories_count
  assert.is(await profile(), 2)

  clock.advance(23 * HOUR - 1) // 1 ms before the first story's 24 hours are up
  assert.equal((await feed(server, bob)).body.data[0].story_ids, [early, later])
  assert.is((await view(server, bob, early)).status, 200)

  clock.advance(1) // exactly 24 hours after the first story
  const afterFirst = await feed(server, bob)
  assert.equal(afterFirst.body.data.map((g: any) => [g.user_id, g.story_count, g.story_ids]), [[alice.id, 1, [later]]])
  assert.is(await profile(), 1)
  const gone = await view(server, bob, early)
  assert.is(gone.status, 404)
  assert.is(gone.body.message, 'Story not found')
  assert.is((await view(server, alice, early)).status, 404, 'expired for the author too')

  clock.advance(HOUR)
  assert.equal((await feed(server, bob)).body.data, [])
  assert.equal((await feed(server, alice)).body.data, [])
  assert.is(await profile(), 0)
  assert.is((await view(server, bob, later)).status, 404)
  await server.close()
})

test('a view is recorded once per viewer and notifies the author once; the author\'s own views are not counted', async () => {
  const clock = manualClock(new Date('2026-03-01T08:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  const id = await textStory(server, alice, { text_content: 'look' })

  const own = await view(server, alice, id)
  assert.is(own.status, 200)
  assert.is(own.body.data.views_count, 0)

  clock.advance(60_000)
  const first = await view(server, bob, id)
  assert.is(first.status, 200)
  assert.equal([first.body.data.id, first.body.data.text_content, first.body.data.username, first.body.data.views_count], [id, 'look', alice.username, 1])
  const again = await view(server, bob, id)
  assert.is(again.body.data.views_count, 1)
  const byCarol = await view(server, carol, id)
  assert.is(byCarol.body.data.views_count, 2)
  assert.is((await view(server, alice, id)).body.data.views_count, 2)

  const notes = await notificationsOf(server, alice)
  assert.equal(
    notes.map((n) => [n.type, n.actor_id, n.story_id, n.post_id, n.post_content]),
    [
      ['story_view', carol.id, id, null, null],
      ['story_view', bob.id, id, null, null],
    ],
  )
  assert.is(notes[1].created_at, '2026-03-01 08:01:00')
  assert.equal(await notificationsOf(server, bob), [], 'viewers are not notified')
  await server.close()
})

test('concurrent views by the same viewer count once', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  const id = await textStory(server, alice)
  const results = await Promise.all(Array.from({ length: 10 }, () => view(server, bob, id)))
  assert.equal(results.map((r) => r.status), Array(10).fill(200))
  const [row] = await server.services.db.select({ views: stories.viewsCount }).from(stories).where(eq(stories.id, id))
  assert.is(row.views, 1)
  assert.is((await notificationsOf(server, alice)).length, 1)
  await server.close()
})

test('followers-only stories are seen by followers and the author; others get 404 and record nothing', async () => {
  const server = await startTestServer()
  const [alice, follower, stranger] = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await follow(server, follower, alice)
  const secret = await textStory(server, alice, { privacy_type: 'followers' })
  const open = await textStory(server, alice, { privacy_type: 'public' })

  const denied = await view(server, stranger, secret)
  assert.is(denied.status, 404)
  assert.is(denied.body.message, 'Story not found')
  assert.is((await view(server, follower, secret)).status, 200)
  assert.is((await view(server, alice, secret)).status, 200)
  // A public story can be opened by anyone signed in, even from outside the feed.
  assert.is((await view(server, stranger, open)).status, 200)

  const [row] = await server.services.db.select({ views: stories.viewsCount }).from(stories).where(eq(stories.id, secret))
  assert.is(row.views, 1, 'only the follower counted')
  const views = (await notificationsOf(server, alice)).filter((n) => n.type === 'story_view')
  assert.equal(views.map((n) => [n.actor_id, n.story_id]), [[stranger.id, open], [follower.id, secret]])
  await server.close()
})

test('unfollowing hides a followers-only story and removes the author from the feed', async () => {
  const server = await startTestServer()
  const [alice, bob] = [await registerUser(server), await registerUser(server)]
  await follow(server, bob, alice)
  const secret = await textStory(server, alice, { privacy_type: 'followers' })
  assert.equal((await feed(server, bob)).body.data.map((g: any) => g.user_id), [alice.id])
  assert.is((await view(server, bob, secret)).status, 200)

  const res = await server.request('DELETE', `${API}/user/unfollow/${alice.id}`, { token: bob.token })
  assert.is(res.status, 200)
  assert.equal((await feed(server, bob)).body.data, [])
  assert.is((await view(server, bob, secret)).status, 404)
  await server.close()
})

test('viewing a missing story is 404, a malformed id 400', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  assert.is((await view(server, alice, 999999)).status, 404)
  for (const bad of ['abc', '0', '-3', '1.5']) {
    const res = await view(server, alice, bad)
    assert.is(res.status, 400, bad)
    assert.match(res.body.message, /story_id/)
  }
  await server.close()
})

test('the feed query is served by indexes (no full scan of stories)', async () => {
  const server = await startTestServer()
  const plan = await queryPlan(server, storyFeedQuery(server.services.db, 1, new Date()))
  assert.match(plan, /stories USING INDEX stories_user_expires_idx/)
  assert.match(plan, /follows USING PRIMARY KEY \(follower_id=\?/)
  assert.not.match(plan, /SCAN stories/)
  assert.not.match(plan, /SCAN users/)
  await server.close()
})

test.run()
