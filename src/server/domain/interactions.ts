import { and, eq, sql } from 'drizzle-orm'
import type { Comment } from '../../shared/types.js'
import { writeTransaction, type Db } from '../db/client.js'
import { comments, likes, posts } from '../db/schema.js'
import { assertOwnUpload } from '../uploads/references.js'
import { notify } from './notifications.js'
import { loadVisiblePost, selectComments, toComment } from './posts.js'

export interface LikeState {
  post_id: number
  likes_count: number
  user_liked: boolean
}

/**
 * Likes a post the caller can see (else 404). Idempotent: the counter and the author's notification
 * change only when the like row was really inserted, in the same transaction.
 */
export async function likePost(db: Db, userId: number, postId: number, now: Date): Promise<LikeState> {
  return writeTransaction(db, async (tx) => {
    const post = await loadVisiblePost(tx, postId, userId)
    const inserted = await tx.insert(likes).values({ postId, userId, createdAt: now.getTime() }).onConflictDoNothing().returning({ postId: likes.postId })
    if (inserted.length === 0) return { post_id: postId, likes_count: post.likesCount, user_liked: true }
    const [updated] = await tx
      .update(posts)
      .set({ likesCount: sql`${posts.likesCount} + 1` })
      .where(eq(posts.id, postId))
      .returning({ likesCount: posts.likesCount })
    await notify(tx, { userId: post.userId, actorId: userId, type: 'like', postId }, now)
    return { post_id: postId, likes_count: updated.likesCount, user_liked: true }
  })
}

/** Removes the caller's like (idempotent); 404 for a post the caller cannot see. */
export async function unlikePost(db: Db, userId: number, postId: number): Promise<LikeState> {
  return writeTransaction(db, async (tx) => {
    const post = await loadVisiblePost(tx, postId, userId)
    const deleted = await tx
      .delete(likes)
      .where(and(eq(likes.postId, postId), eq(likes.userId, userId)))
      .returning({ postId: likes.postId })
    if (deleted.length === 0) return { post_id: postId, likes_count: post.likesCount, user_liked: false }
    const [updated] = await tx
      .update(posts)
      .set({ likesCount: sql`${posts.likesCount} - 1` })
      .where(eq(posts.id, postId))
      .returning({ likesCount: posts.likesCount })
    return { post_id: postId, likes_count: updated.likesCount, user_liked: false }
  })
}

/** Comments on a post the caller can see (else 404); counter and notification in the same transaction. */
export async function commentOnPost(
  db: Db,
  userId: number,
  input: { post_id: number; content: string; image?: string },
  now: Date,
): Promise<Comment> {
  return writeTransaction(db, async (tx) => {
    const post = await loadVisiblePost(tx, input.post_id, userId)
    if (input.image) await assertOwnUpload(tx, userId, input.image)
    const [comment] = await tx
      .insert(comments)
      .values({ postId: post.id, userId, content: input.content, image: input.image ?? '', createdAt: now.getTime() })
      .returning({ id: comments.id })
    await tx
      .update(posts)
      .set({ commentsCount: sql`${posts.commentsCount} + 1` })
      .where(eq(posts.id, post.id))
    await notify(tx, { userId: post.userId, actorId: userId, type: 'comment', postId: post.id }, now)
    const [row] = await selectComments(tx).where(eq(comments.id, comment.id))
    return toComment(row)
  })
}
