import { TRPCError } from '@trpc/server'
import { sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Comment } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { leanStatement } from '../db/prepared.js'
import { comments, likes, posts } from '../db/schema.js'
import { pagesQuery, type Warm } from '../db/warm.js'
import { assertOwnUpload } from '../uploads/references.js'
import { withMediaOne } from './media.js'
import { mentionedIds, mentionsColumn, notifyMentions, resolveMentions } from './mentions.js'
import { notificationPages, notify } from './notifications.js'
import { toComment, visibleTo, visibleToKey } from './posts.js'

export interface LikeState {
  post_id: number
  likes_count: number
  user_liked: boolean
}

/*
 * Every statement here runs under the write lock, so each is a lean `sql` statement (building one
 * with the query builder costs several times what SQLite then takes to run it) and there are as
 * few as the answer allows. Raw results are read by index (see ReadDb in readers.ts).
 */

/** The post's author and likes_count if `viewerId` may see it (the visibility rule of posts.ts), else a 404. */
async function visiblePost(tx: Tx, postId: number, viewerId: number): Promise<{ authorId: number; likesCount: number }> {
  const [row] = await tx.values<[number, number]>(sql`select user_id, likes_count from posts where id = ${postId} and ${visibleTo(viewerId)}`)
  if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
  return { authorId: row[0], likesCount: row[1] }
}

/** Moves a post's likes_count by `delta` (a like row came or went); answers the new count and the author. */
async function countLike(tx: Tx, postId: number, delta: 1 | -1): Promise<{ authorId: number; likesCount: number }> {
  const [row] = await tx.values<[number, number]>(likesCountBy({ post: postId, delta }))
  return { authorId: row[0], likesCount: row[1] }
}

const likesCountBy = leanStatement(['post', 'delta'], (v) => sql`update ${posts} set likes_count = likes_count + ${v.delta} where id = ${v.post} returning user_id, likes_count`)

/** A like of a post `user` may see (the visibility rule inside the insert); nothing for a repeat. Rendered once (leanStatement). */
const insertLike = leanStatement(
  ['user', 'post', 'at'],
  (v) => sql`
    insert into ${likes} (post_id, user_id, created_at)
    select id, ${v.user}, ${v.at} from ${posts} where id = ${v.post} and ${visibleToKey(v.user)}
    on conflict do nothing`,
)

/** The post's author, for a warming read: its notification goes into the author's ranges. */
const authorOf = (postId: Placeholder) => sql`(select user_id from ${posts} where id = ${postId})`

/** The like's place in the primary key and in likes_user_idx (which carries the key: one exact entry). */
function likeRowPages(user: Placeholder, post: Placeholder): SQL[] {
  return [
    sql`select 1 from ${likes} where post_id = ${post} and user_id = ${user}`,
    sql`select 1 from ${likes} indexed by likes_user_idx where user_id = ${user} and post_id = ${post}`,
  ]
}

/**
 * The leaves a new like writes, for `warm` (db/warm.ts): the pair's place in the primary key and
 * in likes_user_idx, the post's row (its likes_count) and the author's notification.
 */
export const likePages = pagesQuery(['user', 'post'], ({ user, post }) => [...likeRowPages(user, post), ...notificationPages(authorOf(post), post)])

/** The leaves an unlike changes, for `warm`: the like's entries and the post's row (its likes_count). */
export const unlikePages = pagesQuery(['user', 'post'], ({ user, post }) => [...likeRowPages(user, post), authorOf(post)])

/**
 * Likes a post the caller can see (else 404). Idempotent: the counter and the author's notification
 * change only when the like row was really inserted, in the same transaction. The visibility test
 * is part of the insert, so a new like costs three statements; the pages they change are read
 * (`warm`) before, outside the write lock.
 */
export async function likePost(db: Db, warm: Warm, userId: number, postId: number, now: Date): Promise<LikeState> {
  await warm(likePages({ user: userId, post: postId }))
  return writeTransaction(db, async (tx) => {
    const inserted = await tx.run(insertLike({ user: userId, post: postId, at: now.getTime() }))
    if (inserted.rowsAffected === 0) {
      // Already liked, or not visible (then a 404).
      const post = await visiblePost(tx, postId, userId)
      return { post_id: postId, likes_count: post.likesCount, user_liked: true }
    }
    const post = await countLike(tx, postId, 1)
    await notify(tx, { userId: post.authorId, actorId: userId, type: 'like', postId }, now)
    return { post_id: postId, likes_count: post.likesCount, user_liked: true }
  })
}

/**
 * Removes the caller's like (idempotent); 404 for a post the caller cannot see, whose like (from
 * when they could) stays. The visibility test is part of the delete; warmed like `likePost`.
 */
export async function unlikePost(db: Db, warm: Warm, userId: number, postId: number): Promise<LikeState> {
  await warm(unlikePages({ user: userId, post: postId }))
  return writeTransaction(db, async (tx) => {
    const deleted = await tx.run(sql`
      delete from likes where post_id = ${postId} and user_id = ${userId}
      and exists (select 1 from posts where id = ${postId} and ${visibleTo(userId)})`)
    if (deleted.rowsAffected === 0) {
      const post = await visiblePost(tx, postId, userId)
      return { post_id: postId, likes_count: post.likesCount, user_liked: false }
    }
    const post = await countLike(tx, postId, -1)
    return { post_id: postId, likes_count: post.likesCount, user_liked: false }
  })
}

/**
 * The leaves a new comment writes, for `warm` (db/warm.ts): the ends of the post's range in
 * comments_post_created_idx and of the commenter's in comments_user_idx (the row itself goes at
 * the table's end), the post's row and the author's notification.
 */
export const commentPages = pagesQuery(['user', 'post'], ({ user, post }) => [
  sql`select max(created_at) from ${comments} indexed by comments_post_created_idx where post_id = ${post}`,
  sql`select max(id) from ${comments} indexed by comments_user_idx where user_id = ${user}`,
  ...notificationPages(authorOf(post), post),
])

/**
 * Comments on a post the caller can see (else 404); counter and notifications in the same
 * transaction, its pages read (`warm`) before it. The post's author is told (`comment`), and the
 * accounts the text mentions who may see the post (mentions.ts, resolved before, on `reads`).
 */
export async function commentOnPost(
  db: Db,
  reads: ReadDb,
  warm: Warm,
  userId: number,
  input: { post_id: number; content: string; image?: string },
  now: Date,
): Promise<Comment> {
  const mentions = await resolveMentions(reads, input.content)
  const mentionsJson = mentionsColumn(mentions)
  await warm(commentPages({ user: userId, post: input.post_id }))
  const created = await writeTransaction(db, async (tx) => {
    const post = await visiblePost(tx, input.post_id, userId)
    if (input.image) await assertOwnUpload(tx, userId, input.image)
    const image = input.image ?? ''
    const [comment] = await tx.values<[number]>(sql`
      insert into comments (post_id, user_id, content, image, created_at, mentions)
      values (${input.post_id}, ${userId}, ${input.content}, ${image}, ${now.getTime()}, ${mentionsJson}) returning id`)
    await tx.run(sql`update posts set comments_count = comments_count + 1 where id = ${input.post_id}`)
    await notify(tx, { userId: post.authorId, actorId: userId, type: 'comment', postId: input.post_id }, now)
    if (mentions.length > 0) {
      await notifyMentions(tx, userId, mentionedIds(mentions), { post: input.post_id }, (viewer) => visibleToKey(viewer), now, [post.authorId])
    }
    const [author] = await tx.values<[string, string, string, number]>(sql`select username, full_name, avatar, is_verified from users where id = ${userId}`)
    return toComment({
      id: comment[0],
      content: input.content,
      image,
      createdAt: now.getTime(),
      mentions: mentionsJson,
      userId,
      username: author[0],
      fullName: author[1],
      avatar: author[2],
      isVerified: Boolean(author[3]),
    })
  })
  return withMediaOne(db, created)
}
