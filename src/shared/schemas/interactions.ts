import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { id, optionalUploadPath } from './common.js'

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
})
export type CommentInput = z.input<typeof commentInput>

export const commentIdInput = z.object({ comment_id: id('comment_id') })
