/**
 * Reading comments: a post's detail with a page of its top-level comments, each with its first
 * replies, and the pages of a comment's replies (GET /comments/{id}/replies). Replies are one
 * level deep, as Instagram's: every reply's `parent_id` is a top-level comment. Writing them is in
 * interactions.ts, deleting them in removal.ts.
 */
import { TRPCError } from '@trpc/server'
import { and, asc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { PostDetail } from '../../shared/schemas/posts.js'
import type { RepliesInput } from '../../shared/schemas/interactions.js'
import type { Comment } from '../../shared/types.js'
import type { ReadDb } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { comments, posts, users } from '../db/schema.js'
import { mediaInfo, mediaOf, type MediaMap } from './media.js'
import { toMentions } from './mentions.js'
import { unrecordedMediaPaths } from './post-media.js'
import { readerForPage } from './page-depth.js'
import { pageOf, parsePostRows, toPostWithMedia, viewerKey, visiblePostQuery, visibleToKey, type Readers } from './posts.js'
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

/**
 * A comment as the API answers it, with the image metadata of `image` and `avatar`, as one object
 * literal: the keys in the order of the API's Comment, each image field's siblings right after it
 * (as attachMedia places them; test/server/media-builders.test.ts checks), every comment of a page
 * with the same shape, and no copy key by key.
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

/** A comment row's values as one JSON array (`c`: the comment, `u`: its author), as toCommentRow reads them. */
function commentValues(c: string, u: string): SQL {
  return sql.raw(`json_array(${c}.id, ${c}.content, ${c}.image, ${c}.created_at, ${c}.mentions, ${c}.parent_id, ${c}.replies_count, ${c}.user_id, ${u}.username, ${u}.full_name, ${u}.avatar, ${u}.is_verified`)
}

/**
 * A post's detail in one statement, as two JSON texts (one value each handed over, not a row per
 * comment mapped): `post`, the post as `viewer` sees it (visiblePostQuery: `[]` when it is hidden
 * or gone), and `comments`, a page of its top-level comments as the viewer sees them (none by an
 * author a block or a suspension hides), each with its first REPLIES_PREVIEW replies the viewer
 * may see: `[...comment, replies | null]` per comment, `[...reply]` per reply. The page is the
 * post's range of `comments_post_parent_created_idx` with parent_id null; a comment's replies,
 * its range (post_id, parent_id) read down to the preview's limit (the authors tested inside, so a
 * hidden reply does not take a place), only for a comment that has any. JSON arrays carry no
 * order a caller may rely on: parseThreads sorts both levels.
 */
export function postDetailQuery(db: ReadDb, postId: Param, viewer: Param, limit: Param, offset: Param) {
  const firstReplies = sql`select json_group_array(${commentValues('r', 'ru')})) from (
      select * from ${comments} r where r.post_id = page.post_id and r.parent_id = page.id and ${authorShownTo(viewer, sql`r.user_id`)}
      order by r.created_at, r.id limit ${REPLIES_PREVIEW}
    ) r join ${users} ru on ru.id = r.user_id`
  const page = sql`select ${comments}.*, ${users.username} as username, ${users.fullName} as full_name, ${users.avatar} as avatar, ${users.isVerified} as is_verified
    from ${comments} join ${users} on ${users.id} = ${comments.userId}
    where ${comments.postId} = ${postId} and ${comments.parentId} is null and ${authorVisibleTo(viewer)}
    order by ${comments.createdAt}, ${comments.id} limit ${limit} offset ${offset}`
  return db
    .select({
      post: sql<string>`(${visiblePostQuery(db, postId, viewer)})`,
      comments: sql<string>`json_group_array(${commentValues('page', 'page')}, case when page.replies_count > 0 then (${firstReplies}) end))`,
    })
    .from(sql`(${page}) page`)
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
const detailPage = prepared((db) => postDetailQuery(db, placeholder('post'), placeholder('viewer'), placeholder('limit'), placeholder('offset')).prepare())
const repliesPage = prepared((db) => repliesQuery(db, placeholder('post'), placeholder('parent'), placeholder('viewer'), placeholder('limit'), placeholder('offset')).prepare())

/** A comment row as commentValues writes it (is_verified as 0/1). */
type CommentValues = [number, string, string, number, string | null, number | null, number, number, string, string, string, number]

function toCommentRow(v: CommentValues): CommentRow {
  return { id: v[0], content: v[1], image: v[2], createdAt: v[3], mentions: v[4], parentId: v[5], repliesCount: v[6], userId: v[7], username: v[8], fullName: v[9], avatar: v[10], isVerified: v[11] === 1 }
}

const oldestFirst = (a: CommentRow, b: CommentRow) => a.createdAt - b.createdAt || a.id - b.id

/** postDetailQuery's `comments`: the comments oldest first, each with its replies oldest first. */
function parseThreads(json: string): Array<CommentRow & { replies: CommentRow[] }> {
  const threads = (JSON.parse(json) as Array<[...CommentValues, CommentValues[] | null]>).map((v) => ({ ...toCommentRow(v as unknown as CommentValues), replies: (v[12] ?? []).map(toCommentRow).sort(oldestFirst) }))
  return threads.sort(oldestFirst)
}

/**
 * The post and a page of its top-level comments, oldest first (`page`/`limit` page the comments),
 * each with its first REPLIES_PREVIEW replies: one prepared statement (postDetailQuery), on
 * `reads` (on `scans` for a deep page of comments), and one media lookup for everything shown.
 * 404 when the post does not exist or the caller may not see it (no hint which).
 */
export async function getPostDetail(dbs: Readers, viewerId: number | null, input: PostDetail) {
  const { page, limit } = input
  const found = (await detailPage(readerForPage(dbs, input)).get({ post: input.post_id, viewer: viewerKey(viewerId), limit: limit + 1, offset: (page - 1) * limit })) as
    | { post: string | null; comments: string }
    | undefined
  const post = parsePostRows(found?.post ?? '[]')[0]
  if (!post) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
  const { items, has_more } = pageOf(parseThreads(found?.comments ?? '[]'), input, (thread) => thread)
  // The post, its comments and their replies share one media lookup.
  const media = await mediaInfo(dbs.reads, [post.avatar, ...unrecordedMediaPaths(post), ...commentPaths(items), ...commentPaths(items.flatMap((thread) => thread.replies))])
  return {
    post: toPostWithMedia(post, media),
    // `replies` added to each comment as it is made: one transition, so every thread has one shape.
    comments: items.map((thread) => Object.assign(toCommentWithMedia(thread, media), { replies: thread.replies.map((reply) => toCommentWithMedia(reply, media)) })),
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
