/**
 * `plaza social post create --image A --image B --alt ...`, `post edit --alt`, `story create --alt`, `comment --reply-to`,
 * `replies`, `bookmark`, `unbookmark`, `bookmarks`, `hashtag TAG` and `trending`: embedded, two
 * accounts on one data directory.
 */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../helpers/server.js'
import { shell, writePng, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
const dataDir = tempDir('plaza-cli-carousel-')
const files = tempDir('plaza-cli-carousel-files-')
let ida: Shell
let jon: Shell

test.before(async () => {
  ida = shell({ dataDir })
  jon = shell({ dataDir })
  for (const [who, name] of [[ida, 'ida'], [jon, 'jon']] as const) {
    const registered = await who.run(['social', 'register', '-u', name, '-e', `${name}@example.com`, '--password-stdin'], { input: PASSWORD })
    assert.is(registered.code, 0, registered.stderr)
  }
})

test.after(() => {
  for (const dir of [dataDir, files, ida.configHome, jon.configHome]) rmSync(dir, { recursive: true, force: true })
})

test('a carousel with alt text, its alt edited; a reply and the replies; saving; a hashtag and the trends', async () => {
  const a = await writePng(files, 'a.png', 60, 40)
  const b = await writePng(files, 'b.png', 30, 50)
  const made = await ida.run(['social', 'post', 'create', 'Harbour #zqcli', '--image', a, '--image', b, '--alt', 'Boats at dawn', '--alt', 'A gull'])
  assert.is(made.code, 0, made.stderr)
  assert.match(made.stdout, /\[image\] uploads\/posts\/\S+\.png \(alt: Boats at dawn\)\n {2}\[image\] uploads\/posts\/\S+\.png \(alt: A gull\)/)
  const post = await ida.json(['social', 'post', 'show', '1'])
  assert.equal(post.post.media.map((m: { alt: string; width: number }) => [m.alt, m.width]), [['Boats at dawn', 60], ['A gull', 30]])
  assert.is(post.post.image, post.post.media[0].path)
  const edited = await ida.json(['social', 'post', 'edit', '1', '--alt', 'Fishing boats at dawn'])
  assert.equal(edited.media.map((m: { alt: string }) => m.alt), ['Fishing boats at dawn', 'A gull'])
  assert.is((await ida.run(['social', 'post', 'edit', '1', '--alt', 'x', '--alt', 'y', '--alt', 'z'])).code, 2, 'more alt texts than images')
  assert.is((await ida.run(['social', 'post', 'create', 'x', '--alt', 'no image'])).code, 2)
  // A story's picture takes alt text too.
  const story = await ida.run(['social', 'story', 'create', '--image', a, '--alt', 'A harbour at dawn'])
  assert.is(story.code, 0, story.stderr)
  assert.match(story.stdout, /\[image\] uploads\/stories\/\S+\.png \(alt: A harbour at dawn\)/)
  assert.is((await ida.run(['social', 'story', 'create', '--text', 'hi', '--alt', 'no image'])).code, 2)

  // A comment and a reply to it.
  const comment = await jon.json(['social', 'comment', '1', 'Lovely'])
  const reply = await ida.run(['social', 'comment', '1', 'Thanks!', '--reply-to', String(comment.id)])
  assert.is(reply.stdout, `replied under comment ${comment.id} (comment ${comment.id + 1})\n`)
  assert.match((await jon.run(['social', 'post', 'show', '1'])).stdout, /#\d+: Lovely\n {4}↳ @ida .*#\d+: Thanks!/)
  const replies = await jon.json(['social', 'replies', String(comment.id)])
  assert.equal(replies.replies.map((r: { content: string; parent_id: number }) => [r.content, r.parent_id]), [['Thanks!', comment.id]])
  assert.match((await jon.run(['social', 'replies', String(comment.id + 1)])).stdout, /no replies/)

  // Saving.
  assert.is((await jon.run(['social', 'bookmark', '1'])).stdout, 'saved post 1\n')
  const saved = await jon.json(['social', 'bookmarks'])
  assert.equal(saved.posts.map((p: { id: number; bookmarked: boolean }) => [p.id, p.bookmarked]), [[1, true]])
  assert.match((await jon.run(['social', 'bookmarks'])).stdout, /saved/)
  assert.equal(await jon.json(['social', 'unbookmark', '1']), { post_id: 1, bookmarked: false })
  assert.match((await jon.run(['social', 'bookmarks'])).stdout, /no saved posts/)
  const missing = await jon.run(['social', 'bookmark', '99'])
  assert.is(missing.code, 1)
  assert.match(missing.stderr, /Post not found/)

  // A hashtag's page, and the trends once a second account uses it.
  const page = await jon.json(['social', 'hashtag', '#ZQCLI'])
  assert.equal([page.tag, page.posts_count, page.posts.map((p: { id: number }) => p.id)], ['zqcli', 1, [1]])
  assert.match((await jon.run(['social', 'hashtag', 'zqcli'])).stdout, /^#zqcli · 1 post\n/)
  assert.is((await jon.run(['social', 'hashtag', 'not-a-tag'])).code, 1)
  assert.match((await jon.run(['social', 'trending'])).stdout, /nothing is trending yet/)
  await jon.run(['social', 'post', 'create', 'Me too #zqcli'])
  // Each embedded command is a process of its own: its ranking is computed afresh.
  assert.equal(await jon.json(['social', 'trending', '--limit', '3']), { hashtags: [{ tag: 'zqcli', posts_count: 2, recent_authors: 2 }] })
  assert.match((await jon.run(['social', 'trending'])).stdout, /^1\. #zqcli · 2 accounts lately · 2 posts\n$/)
})

test.run()
