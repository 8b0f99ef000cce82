/**
 * Reading comments: a post's detail with a page of its top-level comments, each with its first
 * replies, and the pages of a comment's replies (GET /comments/{id}/replies). Replies are one
 * level deep, as Instagram's: every reply's `parent_id` is a top-level comment. Writing them is in
 * interactions.ts, deleting them in removal.ts.
 */
import { TRPCError } from '@trpc/server'
import { and, asc, eq, isNull, sql, type Placeholder } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { PostDetail } from '../../shared/schemas/posts.js'
import type { RepliesInput } from '../../shared/schemas/interactions.js'
import type { Comment } from '../../shared/types.js'
import type { ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { comments, posts, users } from '../db/schema.js'
import { mediaInfo, mediaOf, type Bare, type MediaMap } from './media.js'
import { toMentions } from './mentions.js'
import { unrecordedMediaPaths } from './post-media.js'
import { readerForPage } from './page-depth.js'
import { loadVisiblePost, pageOf, toPostWithMedia, viewerKey, visibleToKey, type Readers } from './posts.js'
import { authorShownTo, authorVisibleTo } from './relations.js'

/** How many replies each top-level comment of a detail page brings along. */
export const REPLIES_PREVIEW = 3

function commentColumns() {
  return {
    id: comments.id,
    content: comments.content,
    image: comments.image,
    createdAt: comments.createdAt,
    mentions: comments.mentions,
    parentId: comments.parentId,
    repliesCount: comments.repliesCount,
    userId: comments.userId,
    username: users.username,
    fullName: users.fullName,
    avatar: users.avatar,
    isVerified: users.isVerified,
  }
}

export interface CommentRow {
  id: number
  content: string
  image: string
  createdAt: number
  mentions: string | null
  parentId: number | null
  repliesCount: number
  userId: number
  username: string
  fullName: string
  avatar: string
  isVerified: boolean
}

export function toComment(row: CommentRow): Bare<Comment> {
  return {
    id: row.id,
    content: row.content,
    image: row.image,
    created_at: formatDateTime(row.createdAt),
    mentions: toMentions(row.mentions),
    parent_id: row.parentId,
    replies_count: row.repliesCount,
    user_id: row.userId,
    username: row.username,
    full_name: row.fullName,
    avatar: row.avatar,
    is_verified: row.isVerified,
  }
}

/**
 * A comment as the API answers it, with the image metadata of `image` and `avatar`, as one object
 * literal: the keys in the order attachMedia gives toComment's (test/server/media-builders.test.ts
 * checks), every comment of a page with the same shape, and no copy key by key.
 */
export function toCommentWithMedia(row: CommentRow, media: MediaMap): Comment {
  const image = mediaOf(media, row.image)
  const avatar = mediaOf(media, row.avatar)
  return {
    id: row.id,
    content: row.content,
    image: row.image,
    image_width: image?.width ?? null,
    image_height: image?.height ?? null,
    image_blurhash: image?.blurhash ?? null,
    created_at: formatDateTime(row.createdAt),
    mentions: toMentions(row.mentions),
    parent_id: row.parentId,
    replies_count: row.repliesCount,
    user_id: row.userId,
    username: row.username,
    full_name: row.fullName,
    avatar: row.avatar,
    avatar_width: avatar?.width ?? null,
    avatar_height: avatar?.height ?? null,
    avatar_blurhash: avatar?.blurhash ?? null,
    is_verified: row.isVerified,
  }
}

/** Every image path a page of comment rows shows, for one mediaInfo lookup. */
function commentPaths(rows: readonly CommentRow[]): string[] {
  const paths: string[] = []
  for (const row of rows) {
    if (row.image !== '') paths.push(row.image)
    if (row.avatar !== '') paths.push(row.avatar)
  }
  return paths
}

function selectComments(db: ReadDb) {
  return db.select(commentColumns()).from(comments).innerJoin(users, eq(users.id, comments.userId))
}

type Param = number | Placeholder

/**
 * A post's top-level comments as `viewer` sees them (none by an author a block or a suspension
 * hides), oldest first: the post's range of `comments_post_parent_created_idx` with parent_id null.
 */
export function commentsQuery(db: ReadDb, postId: Param, viewer: Param, limit: Param, offset: Param) {
  return selectComments(db)
    .where(and(eq(comments.postId, postId), isNull(comments.parentId), authorVisibleTo(viewer)))
    .orderBy(asc(comments.createdAt), asc(comments.id))
    .limit(limit)
    .offset(offset)
}

/**
 * The first REPLIES_PREVIEW replies `viewer` may see of each top-level comment in the JSON array
 * `parents`, in one statement: per parent, one range of `comments_post_parent_created_idx`
 * (post_id, parent_id) read down to its limit (the authors tested inside, so a hidden reply does
 * not take a place), then those rows by primary key.
 */
export function repliesPreviewQuery(db: ReadDb, postId: Param, parents: string | Placeholder, viewer: Param) {
  const firstReplies = sql`select r.id from ${comments} r where r.post_id = ${postId} and r.parent_id = j.value and ${authorShownTo(viewer, sql`r.user_id`)}
    order by r.created_at, r.id limit ${REPLIES_PREVIEW}`
  return db
    .select(commentColumns())
    .from(sql`json_each(${parents}) j`)
    .innerJoin(comments, sql`${comments.id} in (${firstReplies})`)
    .innerJoin(users, eq(users.id, comments.userId))
    .orderBy(asc(comments.createdAt), asc(comments.id))
}

/** A top-level comment's replies as `viewer` sees them, oldest first: one range of (post_id, parent_id). */
export function repliesQuery(db: ReadDb, postId: Param, parentId: Param, viewer: Param, limit: Param, offset: Param) {
  return selectComments(db)
    .where(and(eq(comments.postId, postId), eq(comments.parentId, parentId), authorVisibleTo(viewer)))
    .orderBy(asc(comments.createdAt), asc(comments.id))
    .limit(limit)
    .offset(offset)
}

const placeholder = sql.placeholder
const commentsPage = prepared((db) => commentsQuery(db, placeholder('post'), placeholder('viewer'), placeholder('limit'), placeholder('offset')).prepare())
const repliesPreview = prepared((db) => repliesPreviewQuery(db, placeholder('post'), placeholder('parents'), placeholder('viewer')).prepare())
const repliesPage = prepared((db) => repliesQuery(db, placeholder('post'), placeholder('parent'), placeholder('viewer'), placeholder('limit'), placeholder('offset')).prepare())

/**
 * The post and a page of its top-level comments, oldest first (`page`/`limit` page the comments),
 * each with its first REPLIES_PREVIEW replies: three prepared queries (the post, the comments, the
 * replies of the page's comments at once), on `reads` (a deep page of comments on `scans`), and one
 * media lookup for everything shown.
 */
export async function getPostDetail(dbs: Readers, viewerId: number | null, input: PostDetail) {
  const post = await loadVisiblePost(dbs.reads, input.post_id, viewerId)
  const { page, limit } = input
  const viewer = viewerKey(viewerId)
  const rows = await commentsPage(readerForPage(dbs, input)).all({ post: post.id, viewer, limit: limit + 1, offset: (page - 1) * limit })
  const { items, has_more } = pageOf(rows, input, (row) => row)
  const withReplies = items.filter((row) => row.repliesCount > 0).map((row) => row.id)
  const replies = withReplies.length === 0 ? [] : await repliesPreview(dbs.reads).all({ post: post.id, parents: JSON.stringify(withReplies), viewer })
  // The post, its comments and their replies share one media lookup.
  const media = await mediaInfo(dbs.reads, [post.avatar, ...unrecordedMediaPaths(post), ...commentPaths(items), ...commentPaths(replies)])
  const byParent = new Map<number, Comment[]>()
  for (const reply of replies) {
    const list = byParent.get(reply.parentId!)
    if (list) list.push(toCommentWithMedia(reply, media))
    else byParent.set(reply.parentId!, [toCommentWithMedia(reply, media)])
  }
  return {
    post: toPostWithMedia(post, media),
    // `replies` added to each comment as it is made: one transition, so every thread has one shape.
    comments: items.map((row) => Object.assign(toCommentWithMedia(row, media), { replies: byParent.get(row.id) ?? [] })),
    page,
    has_more,
  }
}

/**
 * The comment `commentId` with its post, if `viewer` may see both (the post's visibility rule and
 * the comment's author): what answering its replies needs. One prepared lookup by primary keys.
 */
const visibleComment = prepared((db) =>
  db
    .select({ id: comments.id, postId: comments.postId, parentId: comments.parentId })
    .from(comments)
    .innerJoin(posts, eq(posts.id, comments.postId))
    .where(and(eq(comments.id, placeholder('comment')), authorShownTo(placeholder('viewer'), comments.userId), visibleToKey(placeholder('viewer'))))
    .limit(1)
    .prepare(),
)

/**
 * A page of a comment's replies, oldest first; 404 when the comment does not exist or the caller
 * may not see it or its post. A reply has no replies of its own (one level): its page is empty.
 */
export async function listReplies(dbs: Readers, viewerId: number | null, input: Required<Pick<RepliesInput, 'comment_id'>> & { page: number; limit: number }) {
  const viewer = viewerKey(viewerId)
  const comment = await visibleComment(dbs.reads).get({ comment: input.comment_id, viewer })
  if (!comment) throw new TRPCError({ code: 'NOT_FOUND', message: 'Comment not found' })
  const { page, limit } = input
  const rows =
    comment.parentId !== null
      ? []
      : await repliesPage(readerForPage(dbs, input)).all({ post: comment.postId, parent: comment.id, viewer, limit: limit + 1, offset: (page - 1) * limit })
  const { items, has_more } = pageOf(rows, input, (row) => row)
  const media = await mediaInfo(dbs.reads, commentPaths(items))
  return { replies: items.map((reply) => toCommentWithMedia(reply, media)), page, has_more }
}
