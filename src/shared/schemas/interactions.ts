import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { id, optionalUploadPath, pagination } from './common.js'

export const likeInput = z.object({ post_id: id('post_id') })
export type LikeInput = z.input<typeof likeInput>

export const commentInput = z.object({
  post_id: id('post_id'),
  content: z
    .string({ error: 'content is required' })
    .trim()
    .min(1, 'content is required')
    .max(TEXT_LIMITS.comment, `content must be at most ${TEXT_LIMITS.comment} characters`),
  image: optionalUploadPath(['comments']),
  /** A reply: the comment it answers (a reply to a reply attaches to the same top-level comment). */
  parent_id: z.preprocess((v) => (v === null ? undefined : v), id('parent_id').optional()),
})
export type CommentInput = z.input<typeof commentInput>

export const commentIdInput = z.object({ comment_id: id('comment_id') })

/** A page of a top-level comment's replies, oldest first. */
export const repliesInput = z.object({ comment_id: id('comment_id'), ...pagination })
export type RepliesInput = z.input<typeof repliesInput>
