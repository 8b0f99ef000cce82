import { TRPCError } from '@trpc/server'
import { eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { TEXT_LIMITS } from '../../shared/schemas/auth.js'
import type { Comment } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { leanStatement, prepared } from '../db/prepared.js'
import { comments, likes, posts, users } from '../db/schema.js'
import { pagesQuery, type Warm } from '../db/warm.js'
import { assertOwnUpload } from '../uploads/references.js'
import { mediaInfo } from './media.js'
import { extractMentions, mentionedIds, mentionsColumn, notifyMentions, resolveMentions } from './mentions.js'
import { notificationPages, notify } from './notifications.js'
import { toCommentWithMedia, type CommentRow } from './comments.js'
import { visibleTo, visibleToKey } from './posts.js'
import { authorShownTo } from './relations.js'

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
 * The leaves a new comment writes, for `warm` (db/warm.ts): the end of its range in
 * comments_post_parent_created_idx (the post's top-level comments, or a parent's replies: `parent`
 * null or a comment id) and of the commenter's in comments_user_idx (the row itself goes at the
 * table's end), the parent's row (its replies_count), the post's row and the author's notification.
 */
export const commentPages = pagesQuery(['user', 'post', 'parent'], ({ user, post, parent }) => [
  sql`select max(created_at) from ${comments} indexed by comments_post_parent_created_idx where post_id = ${post} and parent_id is ${parent}`,
  sql`select max(id) from ${comments} indexed by comments_user_idx where user_id = ${user}`,
  sql`select replies_count from ${comments} where id = ${parent}`,
  ...notificationPages(authorOf(post), post),
])

/** The comment a reply names, read before the transaction: where it is, and its author's name (for the reply's `@name`). */
const repliedTo = prepared((db) =>
  db
    .select({ id: comments.id, postId: comments.postId, parentId: comments.parentId, userId: comments.userId, username: users.username })
    .from(comments)
    .innerJoin(users, eq(users.id, comments.userId))
    .where(eq(comments.id, sql.placeholder('comment')))
    .limit(1)
    .prepare(),
)

const commentNotFound = () => new TRPCError({ code: 'NOT_FOUND', message: 'Comment not found' })

/**
 * Comments on a post the caller can see (else 404), or with `parent_id` replies to one of its
 * comments (one level, as Instagram: a reply to a reply attaches to the same top-level comment and
 * starts with `@` and the name of the author it answers, unless the text names them already or
 * would then be too long). Counters (the post's comments_count, the parent's replies_count) and
 * notifications in the same transaction, its pages read (`warm`) before it. Told, each once: the
 * author of the comment replied to (`reply`), the post's author (`comment`), and the accounts the
 * text mentions who may see the post (mentions.ts; resolved before, on `reads`).
 */
export async function commentOnPost(
  db: Db,
  reads: ReadDb,
  warm: Warm,
  userId: number,
  input: { post_id: number; content: string; image?: string; parent_id?: number },
  now: Date,
): Promise<Comment> {
  let content = input.content
  let target: { id: number; postId: number; parentId: number | null; userId: number; username: string } | undefined
  if (input.parent_id !== undefined) {
    target = await repliedTo(reads).get({ comment: input.parent_id })
    if (!target || target.postId !== input.post_id) throw commentNotFound()
    const named = target.username.toLowerCase()
    if (target.parentId !== null && target.userId !== userId && !extractMentions(content).some((m) => m.name.toLowerCase() === named)) {
      const withName = `@${target.username} ${content}`
      if (withName.length <= TEXT_LIMITS.comment) content = withName
    }
  }
  const parentId = target ? (target.parentId ?? target.id) : null
  const mentions = await resolveMentions(reads, content)
  const mentionsJson = mentionsColumn(mentions)
  await warm(commentPages({ user: userId, post: input.post_id, parent: parentId }))
  const created = await writeTransaction(db, async (tx) => {
    const post = await visiblePost(tx, input.post_id, userId)
    if (target) {
      // Still there, and still shown to the caller (a deletion, a block or a suspension since the read).
      const [still] = await tx.values(sql`select 1 from comments where id = ${target.id} and ${authorShownTo(userId, sql`comments.user_id`)}`)
      if (!still) throw commentNotFound()
    }
    if (input.image) await assertOwnUpload(tx, userId, input.image)
    const image = input.image ?? ''
    const [comment] = await tx.values<[number]>(sql`
      insert into comments (post_id, user_id, content, image, created_at, mentions, parent_id)
      values (${input.post_id}, ${userId}, ${content}, ${image}, ${now.getTime()}, ${mentionsJson}, ${parentId}) returning id`)
    await tx.run(sql`update posts set comments_count = comments_count + 1 where id = ${input.post_id}`)
    if (parentId !== null) await tx.run(sql`update comments set replies_count = replies_count + 1 where id = ${parentId}`)
    const told: number[] = []
    if (target) {
      await notify(tx, { userId: target.userId, actorId: userId, type: 'reply', postId: input.post_id }, now)
      told.push(target.userId)
    }
    if (!told.includes(post.authorId)) {
      await notify(tx, { userId: post.authorId, actorId: userId, type: 'comment', postId: input.post_id }, now)
      told.push(post.authorId)
    }
    if (mentions.length > 0) await notifyMentions(tx, userId, mentionedIds(mentions), { post: input.post_id }, (viewer) => visibleToKey(viewer), now, told)
    const [author] = await tx.values<[string, string, string, number]>(sql`select username, full_name, avatar, is_verified from users where id = ${userId}`)
    const row: CommentRow = {
      id: comment[0],
      content,
      image,
      createdAt: now.getTime(),
      mentions: mentionsJson,
      parentId,
      repliesCount: 0,
      userId,
      username: author[0],
      fullName: author[1],
      avatar: author[2],
      isVerified: Boolean(author[3]),
    }
    return row
  })
  return toCommentWithMedia(created, await mediaInfo(db, [created.image, created.avatar]))
}
