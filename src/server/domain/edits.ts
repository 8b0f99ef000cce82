/** Editing a post: its text, its visibility and its media's alt text change in place; the images stay (a new image is a new post). */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import type { EditPost } from '../../shared/schemas/posts.js'
import type { Post } from '../../shared/types.js'
import { writeTransaction } from '../db/client.js'
import type { Services } from '../services.js'
import { attachHashtags, detachHashtags, extractHashtags } from './hashtags.js'
import { mentionedIds, mentionsColumn, notifyMentions, resolveMentions, toMentions } from './mentions.js'
import { mediaColumn, recordedMedia, storedMedia } from './post-media.js'
import { loadVisiblePost, postsWithMedia, visibleTo, visibleToKey } from './posts.js'

/**
 * The author changes a post's content, visibility or both (403 for anyone else who can see it,
 * 404 otherwise). Hashtag links and counts are redone from the new text and visibility in the same
 * transaction; the search index follows through the posts_fts triggers. An edit that changes
 * nothing leaves `edited_at` as it was. The new text's mentions replace the old, and only the
 * accounts it newly names are told (mentions.ts).
 */
export async function editPost(services: Services, userId: number, input: EditPost): Promise<Post> {
  const postId = input.post_id
  const now = services.clock()
  // The new text's mentions, resolved before the transaction (mentions.ts); null when the text stays.
  const mentions = input.content === undefined ? null : await resolveMentions(services.reads, input.content)
  await writeTransaction(services.db, async (tx) => {
    const [row] = await tx.values<[number, string, string, number, number, number, string | null, string | null]>(
      sql`select user_id, content, image, is_public, (${visibleTo(userId)}), (select is_private from users where id = posts.user_id), mentions, media from posts where id = ${postId}`,
    )
    if (!row || !row[4]) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
    const authorId = row[0], oldContent = row[1], image = row[2], wasPublic = row[3]
    if (authorId !== userId) throw new TRPCError({ code: 'FORBIDDEN', message: 'You can only edit your own posts' })
    const content = input.content ?? oldContent
    const isPublic = input.is_public ?? Boolean(wasPublic)
    if (content === '' && image === '') throw new TRPCError({ code: 'BAD_REQUEST', message: 'a post needs content or an image' })
    const oldMedia = row[7]
    let media = oldMedia
    if (input.media) {
      // New alt text for the same uploads, in the same order: a different picture is a different post.
      const paths = storedMedia(oldMedia, image).map((item) => item[0])
      if (input.media.length !== paths.length || input.media.some((item, i) => item.path !== paths[i])) {
        throw new TRPCError({ code: 'BAD_REQUEST', message: "media must list the post's uploads in their order: only their alt text can change" })
      }
      // The same uploads: what they recorded is kept (an item stored without it stays so).
      media = mediaColumn(input.media, recordedMedia(oldMedia, image))
    }
    if (content === oldContent && isPublic === Boolean(wasPublic) && media === oldMedia) return
    if (content === oldContent && isPublic === Boolean(wasPublic)) {
      await tx.run(sql`update posts set media = ${media}, edited_at = ${now.getTime()} where id = ${postId}`)
      return
    }
    await detachHashtags(tx, sql`select ${postId}`)
    const mentionsJson = mentions === null ? row[6] : mentionsColumn(mentions)
    await tx.run(sql`
      update posts set content = ${content}, is_public = ${isPublic ? 1 : 0}, edited_at = ${now.getTime()}, mentions = ${mentionsJson}, media = ${media} where id = ${postId}`)
    await attachHashtags(tx, postId, extractHashtags(content), isPublic && !row[5])
    // Only the accounts the old text did not name are told.
    if (mentions !== null && mentions.length > 0) {
      const before = toMentions(row[6]).map((m) => m.user_id)
      await notifyMentions(tx, userId, mentionedIds(mentions), { post: postId }, (viewer) => visibleToKey(viewer), now, before)
    }
  })
  return (await postsWithMedia(services.reads, [await loadVisiblePost(services.reads, postId, userId)]))[0]
}
