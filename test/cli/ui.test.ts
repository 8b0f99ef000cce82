/** The human views: plain text helpers, and the ink rendering used on a terminal (colour, NO_COLOR). */
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Notification, Post } from '../../src/shared/types.js'
import { splitHashtags, timeAgo, viewText, type View } from '../../src/cli/ui/format.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const NOW = new Date('2026-03-01T12:00:00Z')

const post: Post = {
  id: 7,
  content: 'Tea at four #wonderland #tea_party',
  image: 'uploads/posts/abcdefgh1234.png',
  image_width: 640,
  image_height: 480,
  image_blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',
  media: [{ path: 'uploads/posts/abcdefgh1234.png', alt: 'A tea party', type: 'image', width: 640, height: 480, blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', poster_url: null }],
  is_public: true,
  likes_count: 3,
  comments_count: 1,
  user_liked: true,
  bookmarked: false,
  created_at: '2026-03-01 11:55:00',
  edited_at: null,
  mentions: [],
  user_id: 1,
  username: 'alice',
  full_name: 'Alice Liddell',
  avatar: '',
  avatar_width: null,
  avatar_height: null,
  avatar_blurhash: null,
  is_verified: true,
}

const notification: Notification = {
  id: 31,
  type: 'like',
  is_read: false,
  created_at: '2026-03-01 09:00:00',
  actor_id: 2,
  actor_username: 'bob',
  actor_full_name: '',
  actor_avatar: '',
  actor_avatar_width: null,
  actor_avatar_height: null,
  actor_avatar_blurhash: null,
  actor_is_verified: false,
  post_id: 7,
  post_content: 'Tea at four',
  post_image: null,
  post_image_width: null,
  post_image_height: null,
  post_image_blurhash: null,
  story_id: null,
}

test('timeAgo: seconds, minutes, hours, days, then the date', () => {
  assert.is(timeAgo('2026-03-01 11:59:50', NOW), 'just now')
  assert.is(timeAgo('2026-03-01 11:55:00', NOW), '5m ago')
  assert.is(timeAgo('2026-03-01 09:00:00', NOW), '3h ago')
  assert.is(timeAgo('2026-02-27 12:00:00', NOW), '2d ago')
  assert.is(timeAgo('2025-12-24 08:00:00', NOW), '2025-12-24')
})

test('splitHashtags finds #tags (letters, digits, _) and keeps the rest', () => {
  assert.equal(splitHashtags('a #b_1 c#d. #é'), [
    { text: 'a ', tag: false },
    { text: '#b_1', tag: true },
    { text: ' c', tag: false },
    { text: '#d', tag: true },
    { text: '. ', tag: false },
    { text: '#é', tag: true },
  ])
})

test('plain text: post, list with a next-page hint, notifications', () => {
  assert.is(
    viewText({ kind: 'post', post }, NOW),
    '#7 @alice ✓ (Alice Liddell) · 5m ago\n  Tea at four #wonderland #tea_party\n  [image] uploads/posts/abcdefgh1234.png (alt: A tea party)\n  3 likes (you liked) · 1 comment',
  )
  const list = viewText({ kind: 'posts', posts: [post], page: 1, has_more: true, empty: 'none' }, NOW)
  assert.match(list, /\n\nmore on page 2 \(--page 2\)$/)
  assert.is(viewText({ kind: 'posts', posts: [], page: 1, has_more: false, empty: 'nothing here' }, NOW), 'nothing here')
  assert.is(viewText({ kind: 'notifications', notifications: [notification] }, NOW), '• 31  @bob liked your post: "Tea at four" · 3h ago')
})

test('plain text: a thread shows its first replies indented and how many more there are', () => {
  const author = { user_id: 2, username: 'bob', full_name: '', avatar: '', avatar_width: null, avatar_height: null, avatar_blurhash: null, is_verified: false }
  const comment = (id: number, content: string, parent_id: number | null, replies_count = 0) => ({
    id, content, image: '', image_width: null, image_height: null, image_blurhash: null, created_at: '2026-03-01 11:55:00', mentions: [], parent_id, replies_count, ...author,
  })
  const thread = { ...comment(40, 'first!', null, 3), replies: [comment(41, 'agreed', 40)] }
  assert.is(
    viewText({ kind: 'post', post, comments: [thread] }, NOW).split('\n').slice(-3).join('\n'),
    '  @bob · 5m ago · #40: first!\n    ↳ @bob · 5m ago · #41: agreed\n    ↳ 2 more replies: plaza social replies 40',
  )
})

/** Renders a view with ink in a fresh process, so colour support is detected from that environment. */
function renderInChild(view: View, env: NodeJS.ProcessEnv): string {
  const script = `
    const { renderView } = await import(${JSON.stringify(path.join(ROOT, 'dist/cli/ui/render.js'))})
    process.stdout.write(renderView(${JSON.stringify(view)}, 60, new Date(${NOW.getTime()})))`
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  })
  assert.is(result.status, 0, result.stderr)
  return result.stdout
}

test('ink: author, time ago, counts, and hashtags highlighted in colour', () => {
  const out = renderInChild({ kind: 'post', post }, { FORCE_COLOR: '1' })
  assert.ok(out.includes('\x1b[35m#wonderland'), 'hashtag in magenta')
  assert.ok(out.includes('\x1b[36m@alice'), 'author in cyan')
  assert.match(out, /5m ago/)
  assert.match(out, /♥.* 3 · 💬 1/)
  assert.match(out, /▣ uploads\/posts\/abcdefgh1234\.png.* — A tea party/, 'each image with its alt text')
  assert.match(out, /╭─+╮/, 'a card with a border')
})

test('ink honours NO_COLOR: the same layout without any escape codes', () => {
  const out = renderInChild({ kind: 'notifications', notifications: [notification] }, { FORCE_COLOR: '1', NO_COLOR: '1' })
  assert.not.ok(out.includes('\x1b['), 'no ANSI codes')
  assert.match(out, /● 31 @bob liked your post “Tea at four” · 3h ago/)
})

test.run()
