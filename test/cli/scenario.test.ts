/**
 * The whole social scenario through the real `plaza` binary, once embedded (no server) and once
 * against a server started here: two users register, follow, post with an image, like, comment,
 * view a story, search and read notifications. `--json` output is checked, remote results are
 * confirmed over REST, and both runs must print the same thing (ids, times and file names aside).
 */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { shell, writePng, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'

interface Run {
  /** Every --json answer in order, for comparing embedded with remote. */
  outputs: unknown[]
  shells: Shell[]
}

/** Confirms a CLI answer over REST as the other party: same data object, per the contract. */
type RestCheck = (path: string, token: string, expected: unknown, method?: string) => Promise<void>

async function scenario(alice: Shell, bob: Shell, image: string, rest: RestCheck | null): Promise<Run> {
  const outputs: unknown[] = []
  const json = async <T = any>(who: Shell, args: string[], input?: string): Promise<T> => {
    const data = await who.json<T>(args, { input })
    outputs.push(data)
    return data
  }

  // Register both; the session is kept, the token never printed.
  const a = await json(alice, ['social', 'register', '--username', 'alice', '--email', 'alice@example.com', '--full-name', 'Alice Liddell', '--password-stdin'], PASSWORD + '\n')
  assert.equal(Object.keys(a).sort(), ['expires_at', 'user'])
  assert.equal(a.user.username, 'alice')
  assert.equal(a.user.full_name, 'Alice Liddell')
  assert.match(a.expires_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  const b = await json(bob, ['social', 'register', '--username', 'bob', '--email', 'bob@example.com', '--password-stdin'], PASSWORD)
  assert.equal(b.user.username, 'bob')
  const aliceToken = Object.values(alice.sessions())[0].token
  const bobToken = Object.values(bob.sessions())[0].token
  assert.ok(aliceToken && bobToken && aliceToken !== bobToken)

  // Bob follows Alice by username; the answer is Alice's profile after the change.
  const followed = await json(bob, ['social', 'follow', 'alice'])
  assert.is(followed.id, a.user.id)
  assert.is(followed.is_following, true)
  assert.is(followed.followers_count, 1)
  if (rest) await rest(`/user/profile/${a.user.id}`, bobToken, followed)
  const followers = await json(alice, ['social', 'followers', 'alice'])
  assert.equal(followers.users.map((u: { username: string }) => u.username), ['bob'])
  assert.is(followers.has_more, false)

  // Alice posts with an image: --image uploads first, the post references the upload.
  const post = await json(alice, ['social', 'post', 'create', 'Tea party at four #wonderland', '--image', image])
  assert.is(post.content, 'Tea party at four #wonderland')
  assert.match(post.image, /^uploads\/posts\/[A-Za-z0-9_-]+\.png$/)
  assert.is(post.username, 'alice')
  assert.is(post.likes_count, 0)
  const me = await json(alice, ['social', 'whoami'])
  assert.is(me.posts_count, 1)

  // Bob sees it in his feed, likes it, comments.
  const feed = await json(bob, ['social', 'feed'])
  assert.equal(feed.posts.map((p: { id: number }) => p.id), [post.id])
  if (rest) await rest('/posts/feed', bobToken, feed)
  const liked = await json(bob, ['social', 'like', String(post.id)])
  assert.equal(liked, { post_id: post.id, likes_count: 1, user_liked: true })
  const comment = await json(bob, ['social', 'comment', String(post.id), 'Save me a seat'])
  assert.is(comment.content, 'Save me a seat')
  assert.is(comment.username, 'bob')
  const detail = await json(alice, ['social', 'post', 'show', String(post.id)])
  assert.is(detail.post.likes_count, 1)
  assert.is(detail.post.comments_count, 1)
  assert.equal(detail.comments.map((c: { id: number }) => c.id), [comment.id])
  if (rest) await rest(`/posts/detail/${post.id}`, aliceToken, detail)

  // Alice publishes a text story; Bob finds it in his story feed and views it.
  const story = await json(alice, ['social', 'story', 'create', '--text', 'Down the rabbit hole', '--background-color', '#FF7A2F', '--privacy', 'followers'])
  assert.is(story.content_type, 'text')
  assert.is(story.text_content, 'Down the rabbit hole')
  assert.is(story.background_color, '#FF7A2F')
  assert.is(story.privacy_type, 'followers')
  const stories = await json(bob, ['social', 'story', 'feed'])
  assert.equal(stories.map((g: { username: string; story_ids: number[] }) => [g.username, g.story_ids]), [['alice', [story.id]]])
  const viewed = await json(bob, ['social', 'story', 'view', String(story.id)])
  assert.is(viewed.id, story.id)
  assert.is(viewed.views_count, 1)

  // Search finds the user, the post and the hashtag.
  const found = await json(bob, ['social', 'search', 'wonderland'])
  assert.ok(found.posts.some((p: { id: number }) => p.id === post.id), 'post found by its hashtag word')
  const users = await json(bob, ['social', 'search', 'alic', '--type', 'users'])
  assert.equal(Object.keys(users), ['users'])
  assert.ok(users.users.some((u: { username: string }) => u.username === 'alice'))
  const tags = await json(bob, ['social', 'search', 'wonder', '--type', 'hashtags'])
  assert.ok(tags.hashtags.some((h: { tag: string; posts_count: number }) => h.tag.replace(/^#/, '') === 'wonderland' && h.posts_count === 1))
  if (rest) await rest('/search/users?q=alic', bobToken, users)

  // Alice reads her notifications: follow, like, comment and story view, all by Bob.
  const unread = await json(alice, ['social', 'notifications', 'count'])
  assert.equal(unread, { count: 4 })
  const list = await json(alice, ['social', 'notifications', '--unread'])
  assert.equal(list.notifications.map((n: { type: string }) => n.type).sort(), ['comment', 'follow', 'like', 'story_view'])
  assert.ok(list.notifications.every((n: { actor_username: string; is_read: boolean }) => n.actor_username === 'bob' && !n.is_read))
  if (rest) await rest('/notifications/list?unread_only=true', aliceToken, list)
  const first = list.notifications[0].id
  assert.equal(await json(alice, ['social', 'notifications', 'read', String(first)]), { updated: 1 })
  assert.equal(await json(alice, ['social', 'notifications', 'read']), { updated: 3 })
  assert.equal(await json(alice, ['social', 'notifications', 'count']), { count: 0 })
  if (rest) await rest('/notifications/count', aliceToken, { count: 0 })

  // Bob takes the like back; Alice's profile counts are right; Bob logs out (revoked, forgotten).
  assert.equal(await json(bob, ['social', 'unlike', String(post.id)]), { post_id: post.id, likes_count: 0, user_liked: false })
  const profile = await json(bob, ['social', 'profile', 'alice'])
  assert.is(profile.followers_count, 1)
  assert.is(profile.posts_count, 1)
  assert.is(profile.active_stories_count, 1)
  assert.is(profile.is_following, true)
  const out = await bob.run(['social', 'logout', '--json'])
  assert.is(out.code, 0)
  assert.is(out.stdout.trim(), 'null')
  assert.equal(bob.sessions(), {})
  const after = await bob.run(['social', 'whoami'])
  assert.is(after.code, 4)

  // Nothing printed, by anyone, ever contained a token.
  for (const text of [...alice.transcript, ...bob.transcript]) {
    assert.not.ok(text.includes(aliceToken) || text.includes(bobToken), 'a token was printed')
    assert.not.match(text, /plz_[A-Za-z0-9_-]{20,}/)
  }
  return { outputs, shells: [alice, bob] }
}

/** Ids, times, tokens and file names differ between two runs; everything else must match. */
function normalise(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, '<time>')
      .replace(/uploads\/(\w+)\/[A-Za-z0-9_-]+\.(\w+)/g, 'uploads/$1/<file>.$2')
      .replace(/https?:\/\/[^/"]+\//g, '<origin>/'),
  )
}

let embeddedRun: Run
let remoteRun: Run
let server: TestServer
const dirs: string[] = []

test.before(async () => {
  server = await startTestServer()
})

test.after(async () => {
  await server.close()
  for (const dir of [...dirs, ...[embeddedRun, remoteRun].flatMap((r) => r?.shells.map((s) => s.configHome) ?? [])]) {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('embedded: the whole scenario on a local data directory, no server', async () => {
  const dataDir = tempDir('plaza-cli-data-')
  const files = tempDir('plaza-cli-files-')
  dirs.push(dataDir, files)
  const image = await writePng(files)
  embeddedRun = await scenario(shell({ dataDir }), shell({ dataDir }), image, null)
})

test('remote: the same scenario against a running server, confirmed over REST', async () => {
  const files = tempDir('plaza-cli-files-')
  dirs.push(files)
  const image = await writePng(files)
  const rest: RestCheck = async (path, token, expected, method = 'GET') => {
    const res = await server.request(method, `/api/mobile${path}`, { token })
    assert.is(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.data, expected, `REST ${path} differs from the CLI's --json`)
  }
  remoteRun = await scenario(shell({ url: server.url }), shell({ url: server.url }), image, rest)

  // The uploaded image is really served where the post says.
  const post = remoteRun.outputs.find((o) => (o as { image?: string }).image) as { image: string }
  const file = await server.request('GET', `/${post.image}`)
  assert.is(file.status, 200)
  assert.is(file.headers.get('content-type'), 'image/png')
})

test('the same commands print the same data embedded and remote', () => {
  assert.ok(embeddedRun && remoteRun, 'both runs completed')
  assert.equal(normalise(remoteRun.outputs), normalise(embeddedRun.outputs))
})

test.run()
