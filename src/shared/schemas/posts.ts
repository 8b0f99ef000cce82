import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { altText, id, optionalUploadPath, pagination, refused, uploadPath } from './common.js'
import { userRef } from './users.js'

/** Most images and videos one post holds (a carousel), as Instagram's. */
export const MEDIA_MAX = 10

/** One item of a carousel: an own post upload (image or video) and its alt text. */
const mediaItem = z.object(
  { path: uploadPath(['posts']), alt: altText('alt').default('') },
  { error: 'each media item must be an object {path, alt}' },
)

/** A carousel in order, 1 to MEDIA_MAX items, each upload once. */
const mediaList = z
  .array(mediaItem, { error: 'media must be a list of {path, alt}' })
  .min(1, 'media needs at least one item (leave it out for none)')
  .max(MEDIA_MAX, `media holds at most ${MEDIA_MAX} images and videos`)
  .refine((items) => new Set(items.map((item) => item.path)).size === items.length, 'media lists an upload twice')

/**
 * A post needs text, an image or media (or several); hashtags and mentions are read from the text.
 * `media` is a carousel; `image` may then be left out (it becomes the first item's path) or must
 * be that path.
 */
export const createPostInput = z
  .object({
    content: z
      .string({ error: 'content must be a string' })
      .trim()
      .max(TEXT_LIMITS.post, `content must be at most ${TEXT_LIMITS.post} characters`)
      .default(''),
    image: optionalUploadPath(['posts']),
    media: mediaList.optional(),
    is_public: z.boolean({ error: 'is_public must be true or false' }).default(true),
  })
  .refine((post) => post.content !== '' || post.image !== undefined || post.media !== undefined, { message: 'a post needs content or an image' })
  .refine((post) => post.media === undefined || post.image === undefined || post.image === post.media[0].path, {
    message: 'image must be the first media item\'s path (or left out)',
    path: ['image'],
  })
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
    /** The post's media with new alt text: the same uploads in the same order (a new picture is a new post). */
    media: mediaList.optional(),
  })
  .refine((edit) => edit.content !== undefined || edit.is_public !== undefined || edit.media !== undefined, { message: 'give content, is_public or media to change' })
export type EditPostInput = z.input<typeof editPostInput>
export type EditPost = z.output<typeof editPostInput>

/** Detail pages its comments like every other list (oldest first). */
export const postDetailInput = z.object({ post_id: id('post_id'), ...pagination })
export type PostDetailInput = z.input<typeof postDetailInput>
export type PostDetail = z.output<typeof postDetailInput>

export const postsByUserInput = z.object({ user_id: userRef, ...pagination })
export type PostsByUserInput = z.input<typeof postsByUserInput>

/**
 * A hashtag as a path names it: `#` optional, any case; letters, digits and `_` of any script, up to
 * 100, as hashtags.ts reads them from text. Lower-cased, without the `#`.
 */
export const hashtagTag = z
  .string({ error: 'tag is required' })
  .trim()
  .transform((tag) => tag.replace(/^#/, '').toLowerCase())
  .pipe(z.string().regex(/^[\p{L}\p{N}_]{1,100}$/u, 'tag must be 1 to 100 letters, digits or _ (the # is optional)'))

/** A hashtag's page: its public posts, newest first. */
export const hashtagPageInput = z.object({ tag: hashtagTag, ...pagination })
export type HashtagPageInput = z.input<typeof hashtagPageInput>
