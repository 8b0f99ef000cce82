/**
 * The answer builders that write image metadata themselves (toPostWithMedia, toCommentWithMedia, toNotificationWithMedia)
 * give exactly what the general rule gives: the object's fields in the API's order, then
 * attachMedia's siblings after each image field. Same keys, same order, same values, with and
 * without recorded media, so an answer's bytes are what every other answer's rule would make.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { toCommentWithMedia, type CommentRow } from '../../src/server/domain/comments.js'
import { attachMedia, type MediaMap } from '../../src/server/domain/media.js'
import { mediaColumn, storedMedia, toPostMedia, unrecordedMediaPaths } from '../../src/server/domain/post-media.js'
import { toPostWithMedia, type PostRow } from '../../src/server/domain/posts.js'
import { toNotificationWithMedia, type NotificationRow } from '../../src/server/domain/views.js'
import { formatDateTime } from '../../src/shared/dates.js'

const media: MediaMap = new Map([
  ['/uploads/a.webp', { width: 640, height: 480, blurhash: 'LEHV6nWB2yk8', poster: null, mime: 'image/webp' }],
  ['/uploads/b.webp', { width: 96, height: 96, blurhash: null, poster: null, mime: 'image/webp' }],
  ['/uploads/c.webp', { width: null, height: null, blurhash: null, poster: null, mime: null }],
  ['/uploads/v.mp4', { width: 1280, height: 720, blurhash: 'LKO2?U%2Tw=w', poster: '/uploads/v.jpg', mime: 'video/mp4' }],
])
const paths = ['', '/uploads/a.webp', '/uploads/b.webp', '/uploads/c.webp', '/uploads/unrecorded.webp']

/** A post's fields in the order the API answers them, before its image metadata. */
const barePost = (row: PostRow, map: MediaMap) => ({
  id: row.id,
  content: row.content,
  image: row.image,
  media: toPostMedia(storedMedia(row.media, row.image), map),
  is_public: row.isPublic,
  likes_count: row.likesCount,
  comments_count: row.commentsCount,
  user_liked: row.userLiked,
  bookmarked: row.bookmarked,
  created_at: formatDateTime(row.createdAt),
  edited_at: row.editedAt === null ? null : formatDateTime(row.editedAt),
  mentions: row.mentions === null ? [] : [{ user_id: 7, username: 'ann', start: 0, end: 4 }],
  user_id: row.userId,
  username: row.username,
  full_name: row.fullName,
  avatar: row.avatar,
  is_verified: row.isVerified,
})

/** A comment's fields in the order of the API's Comment, before its image metadata. */
const bareComment = (row: CommentRow) => ({
  id: row.id,
  content: row.content,
  image: row.image,
  created_at: formatDateTime(row.createdAt),
  mentions: row.mentions === null ? [] : [{ user_id: 7, username: 'ann', start: 11, end: 15 }],
  parent_id: row.parentId,
  replies_count: row.repliesCount,
  user_id: row.userId,
  username: row.username,
  full_name: row.fullName,
  avatar: row.avatar,
  is_verified: row.isVerified,
})

/** A notification's fields in the order of the API's Notification; no post, null post fields. */
const bareNotification = (row: NotificationRow) => ({
  id: row.id,
  type: row.type,
  is_read: row.isRead,
  created_at: formatDateTime(row.createdAt),
  actor_id: row.actorId,
  actor_username: row.actorUsername,
  actor_full_name: row.actorFullName,
  actor_avatar: row.actorAvatar,
  actor_is_verified: row.actorIsVerified,
  post_id: row.postId,
  post_content: row.postId === null ? null : row.postContent,
  post_image: row.postId === null ? null : row.postImage,
  story_id: row.storyId,
})

const post = (image: string, avatar: string, n: number): PostRow => ({
  id: n,
  content: `post ${n} "quoted" \u2028 ✓`,
  image,
  media: n % 3 === 1 ? JSON.stringify([[image, 'first'], ['/uploads/v.mp4', 'a video']]) : null,
  isPublic: n % 2 === 0,
  likesCount: n * 3,
  commentsCount: n,
  createdAt: 1_700_000_000_000 + n * 1_234_567,
  editedAt: n % 3 === 0 ? null : 1_700_000_100_000 + n,
  mentions: n % 2 === 0 ? null : '[[7,"ann",0,4]]',
  userId: 10 + n,
  username: `user${n}`,
  fullName: `User ${n}`,
  avatar,
  isVerified: n % 4 === 0,
  userLiked: n % 5 === 0,
  bookmarked: n % 6 === 0,
})

const notification = (avatar: string, postImage: string | null, postId: number | null, n: number): NotificationRow => ({
  id: n,
  type: postId === null ? 'follow' : 'like',
  isRead: n % 2 === 1,
  createdAt: 1_700_000_000_000 + n * 7_654_321,
  actorId: 20 + n,
  actorUsername: `actor${n}`,
  actorFullName: `Actor ${n}`,
  actorAvatar: avatar,
  actorIsVerified: n % 3 === 0,
  postId,
  postContent: postId === null ? null : `content ${n}`,
  postImage,
  storyId: n % 7 === 0 ? n : null,
})

test('toPostWithMedia answers what attachMedia makes of the bare post, byte for byte', () => {
  let n = 0
  for (const image of paths)
    for (const avatar of paths)
      for (const map of [media, new Map()] as MediaMap[]) {
        const row = post(image, avatar, ++n)
        assert.is(JSON.stringify(toPostWithMedia(row, map)), JSON.stringify(attachMedia(map, barePost(row, map))))
      }
})

test('a post whose items carry what their uploads recorded (as posts are written) answers the same with no lookup of them', () => {
  let n = 100
  for (const image of paths.filter((path) => path !== ''))
    for (const avatar of paths)
      for (const alt of ['', 'first']) {
        const items = [{ path: image, alt }, ...(n % 2 === 0 ? [{ path: '/uploads/v.mp4', alt: 'a video' }] : [])]
        const row = { ...post(image, avatar, ++n), media: mediaColumn(items, media) }
        const recorded = items.every((item) => media.has(item.path))
        assert.equal(unrecordedMediaPaths(row), items.filter((item) => !media.has(item.path)).map((item) => item.path), row.media ?? 'null')
        // Only the avatar (and what was not recorded) comes from the page's lookup.
        const lookup: MediaMap = new Map([avatar, ...unrecordedMediaPaths(row)].flatMap((path) => (media.has(path) ? [[path, media.get(path)!]] : [])))
        assert.is(JSON.stringify(toPostWithMedia(row, lookup)), JSON.stringify(attachMedia(media, barePost(row, media))), `${image} ${avatar} ${alt} ${recorded}`)
      }
})

test('toCommentWithMedia answers what attachMedia makes of the bare comment, byte for byte', () => {
  let n = 0
  for (const image of paths)
    for (const avatar of paths)
      for (const map of [media, new Map()] as MediaMap[]) {
        n++
        const row: CommentRow = {
          id: n,
          content: `comment ${n} @ann`,
          image,
          createdAt: Date.UTC(2026, 0, 2, 3, 4, n % 60),
          mentions: n % 2 === 0 ? null : JSON.stringify([[7, 'ann', 11, 15]]),
          parentId: n % 3 === 0 ? null : 40,
          repliesCount: n % 4,
          userId: 9,
          username: 'bo',
          fullName: 'Bo',
          avatar,
          isVerified: n % 5 === 0,
        }
        assert.is(JSON.stringify(toCommentWithMedia(row, map)), JSON.stringify(attachMedia(map, bareComment(row))), `${image} ${avatar}`)
      }
})

test('toNotificationWithMedia answers what attachMedia makes of the bare notification, byte for byte', () => {
  let n = 0
  for (const avatar of paths)
    for (const postImage of [...paths, null])
      for (const postId of [null, 5])
        for (const map of [media, new Map()] as MediaMap[]) {
          const row = notification(avatar, postImage, postId, ++n)
          assert.is(JSON.stringify(toNotificationWithMedia(row, map)), JSON.stringify(attachMedia(map, bareNotification(row))))
        }
})

test.run()
