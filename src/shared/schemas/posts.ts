import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { id, optionalUploadPath, pagination, refused } from './common.js'
import { userRef } from './users.js'

/** A post needs text or an image (or both); hashtags are read from the text. */
export const createPostInput = z
  .object({
    content: z
      .string({ error: 'content must be a string' })
      .trim()
      .max(TEXT_LIMITS.post, `content must be at most ${TEXT_LIMITS.post} characters`)
      .default(''),
    image: optionalUploadPath(['posts']),
    is_public: z.boolean({ error: 'is_public must be true or false' }).default(true),
  })
  .refine((post) => post.content !== '' || post.image !== undefined, { message: 'a post needs content or an image' })
export type CreatePostInput = z.input<typeof createPostInput>
export type CreatePost = z.output<typeof createPostInput>

export const feedInput = z.object(pagination).default({ page: 1, limit: 20 })
export type FeedInput = z.input<typeof feedInput>

export const postIdInput = z.object({ post_id: id('post_id') })

/** An edit changes the text, the visibility or both; the image stays (a new image is a new post). */
export const editPostInput = z
  .object({
    post_id: id('post_id'),
    content: z
      .string({ error: 'content must be a string' })
      .trim()
      .max(TEXT_LIMITS.post, `content must be at most ${TEXT_LIMITS.post} characters`)
      .optional(),
    is_public: z.boolean({ error: 'is_public must be true or false' }).optional(),
    image: refused('image cannot be changed: a post keeps its image; publish a new post (POST /api/mobile/posts/create) for another'),
  })
  .refine((edit) => edit.content !== undefined || edit.is_public !== undefined, { message: 'give content or is_public to change' })
export type EditPostInput = z.input<typeof editPostInput>
export type EditPost = z.output<typeof editPostInput>

/** Detail pages its comments like every other list (oldest first). */
export const postDetailInput = z.object({ post_id: id('post_id'), ...pagination })
export type PostDetailInput = z.input<typeof postDetailInput>
export type PostDetail = z.output<typeof postDetailInput>

export const postsByUserInput = z.object({ user_id: userRef, ...pagination })
export type PostsByUserInput = z.input<typeof postsByUserInput>
