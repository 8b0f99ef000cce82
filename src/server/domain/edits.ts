/** Editing a post: its text and its visibility change in place; the image stays (a new image is a new post). */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import type { EditPost } from '../../shared/schemas/posts.js'
import type { Post } from '../../shared/types.js'
import { writeTransaction } from '../db/client.js'
import type { Services } from '../services.js'
import { attachHashtags, detachHashtags, extractHashtags } from './hashtags.js'
import { loadVisiblePost, postsWithMedia, visibleTo } from './posts.js'

/**
 * The author changes a post's content, visibility or both (403 for anyone else who can see it,
 * 404 otherwise). Hashtag links and counts are redone from the new text and visibility in the same
 * transaction; the search index follows through the posts_fts triggers. An edit that changes
 * nothing leaves `edited_at` as it was.
 */
export async function editPost(services: Services, userId: number, input: EditPost): Promise<Post> {
  const postId = input.post_id
  await writeTransaction(services.db, async (tx) => {
    const [row] = await tx.values<[number, string, string, number, number]>(
      sql`select user_id, content, image, is_public, (${visibleTo(userId)}) from posts where id = ${postId}`,
    )
    if (!row || !row[4]) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
    const authorId = row[0], oldContent = row[1], image = row[2], wasPublic = row[3]
    if (authorId !== userId) throw new TRPCError({ code: 'FORBIDDEN', message: 'You can only edit your own posts' })
    const content = input.content ?? oldContent
    const isPublic = input.is_public ?? Boolean(wasPublic)
    if (content === '' && image === '') throw new TRPCError({ code: 'BAD_REQUEST', message: 'a post needs content or an image' })
    if (content === oldContent && isPublic === Boolean(wasPublic)) return
    await detachHashtags(tx, sql`select ${postId}`)
    await tx.run(sql`update posts set content = ${content}, is_public = ${isPublic ? 1 : 0}, edited_at = ${services.clock().getTime()} where id = ${postId}`)
    await attachHashtags(tx, postId, extractHashtags(content), isPublic)
  })
  return (await postsWithMedia(services.reads, [await loadVisiblePost(services.reads, postId, userId)]))[0]
}
