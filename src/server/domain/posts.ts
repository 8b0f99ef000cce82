import { TRPCError } from '@trpc/server'
import { and, desc, eq, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { CreatePost } from '../../shared/schemas/posts.js'
import type { Post } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb } from '../db/client.js'
import { prepared, type AnyDb } from '../db/prepared.js'
import { bookmarks, follows, likes, posts, users } from '../db/schema.js'
import { assertOwnUpload, assertOwnUploads } from '../uploads/references.js'
import { attachHashtags, extractHashtags } from './hashtags.js'
import { mentionedIds, mentionsColumn, notifyMentions, resolveMentions, toMentions } from './mentions.js'
import type { Fanout } from './fanout.js'
import { mediaInfo, mediaOf, type MediaMap } from './media.js'
import { mediaColumn, postImageInfo, storedMedia, toPostMedia, unrecordedPaths, type StoredMediaItem } from './post-media.js'
import { timelineFeedIds } from './timelines.js'
import { readerForPage } from './page-depth.js'
import { authorShownTo, unmuted } from './relations.js'
import { assertSeesAccount, findVisibleUser } from './users.js'

/** Ids start at 1, so 0 matches nobody: an anonymous caller has liked nothing and follows no one. */
export const viewerKey = (viewerId: number | null) => viewerId ?? 0

/** Whether `viewer` saved the post: one probe of the bookmarks primary key (post_id, user_id). */
function bookmarkedBy(viewer: number | Placeholder): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${bookmarks} vb where vb.post_id = ${posts.id} and vb.user_id = ${viewer})`
}

/**
 * The columns of one Post row for `viewer`: the post, its author (join on the primary key), whether
 * the viewer liked it (a left join on the likes primary key) and saved it (a probe of the bookmarks
 * primary key), so a list is one query, never one per row.
 */
export function postColumns(viewer: number | Placeholder) {
  return {
    id: posts.id,
    content: posts.content,
    image: posts.image,
    media: posts.media,
    isPublic: posts.isPublic,
    likesCount: posts.likesCount,
    commentsCount: posts.commentsCount,
    createdAt: posts.createdAt,
    editedAt: posts.editedAt,
    mentions: posts.mentions,
    userId: posts.userId,
    username: users.username,
    fullName: users.fullName,
    avatar: users.avatar,
    isVerified: users.isVerified,
    userLiked: sql<boolean>`${likes.userId} is not null`.mapWith(Boolean),
    bookmarked: bookmarkedBy(viewer).mapWith(Boolean),
  }
}

export interface PostRow {
  id: number
  content: string
  image: string
  /** The media column as stored (post-media.ts): JSON text, or null when `image` says it all. */
  media: string | null
  isPublic: boolean
  likesCount: number
  commentsCount: number
  createdAt: number
  editedAt: number | null
  /** The mentions column as stored (mentions.ts): JSON text, or null for none. */
  mentions: string | null
  userId: number
  username: string
  fullName: string
  avatar: string
  isVerified: boolean
  userLiked: boolean
  bookmarked: boolean
}

/** A PostRow as the page query's JSON has it: postColumns' values in order, booleans as 0/1. */
type PostRowValues = [number, string, string, string | null, number, number, number, number, number | null, string | null, number, string, string, string, number, number, number]

/**
 * postColumns' values as one JSON array per row, all the rows as one JSON text (one row, one
 * value). For a page looked up by ids: the libsql binding costs about half a microsecond per row
 * and more per value to hand rows over, drizzle then maps each, and a page of posts read as one
 * string and `JSON.parse`d takes about 60% of the time (38 against 60 µs for 21 posts on the
 * 1M-post network). No order: postPage puts the rows in the order of the ids asked for.
 */
function postRowsAsJson(viewer: number | Placeholder): SQL<string> {
  return sql<string>`json_group_array(json_array(${posts.id}, ${posts.content}, ${posts.image}, ${posts.media}, ${posts.isPublic}, ${posts.likesCount}, ${posts.commentsCount}, ${posts.createdAt}, ${posts.editedAt}, ${posts.mentions}, ${posts.userId}, ${users.username}, ${users.fullName}, ${users.avatar}, ${users.isVerified}, ${likes.userId} is not null, ${bookmarkedBy(viewer)}))`
}

/** The rows postRowsAsJson wrote, as drizzle maps postColumns (a boolean column is `value === 1`). */
export function parsePostRows(json: string): PostRow[] {
  return (JSON.parse(json) as PostRowValues[]).map((v) => ({
    id: v[0],
    content: v[1],
    image: v[2],
    media: v[3],
    isPublic: v[4] === 1,
    likesCount: v[5],
    commentsCount: v[6],
    createdAt: v[7],
    editedAt: v[8],
    mentions: v[9],
    userId: v[10],
    username: v[11],
    fullName: v[12],
    avatar: v[13],
    isVerified: v[14] === 1,
    userLiked: v[15] === 1,
    bookmarked: v[16] === 1,
  }))
}

/** selectPostsFor's rows as one JSON text (postRowsAsJson); callers add where, never order or paging. */
export function selectPostPageFor(db: AnyDb, viewer: number | Placeholder) {
  return db
    .select({ rows: postRowsAsJson(viewer) })
    .from(posts)
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, viewer)))
}

/**
 * Runs a prepared selectPostPageFor query with `ids` (a page of post ids) and `viewer`: the rows
 * it found, in the order of `ids`; an id the query left out (gone, or hidden from the viewer) has none.
 */
export async function postPage(query: { get(values: Record<string, unknown>): unknown }, ids: readonly number[], viewer: number): Promise<PostRow[]> {
  if (ids.length === 0) return []
  const row = (await query.get({ ids: JSON.stringify(ids), viewer })) as { rows: string } | undefined
  const byId = new Map(parsePostRows(row?.rows ?? '[]').map((post) => [post.id, post]))
  return ids.flatMap((id) => byId.get(id) ?? [])
}

/**
 * A post as the API answers it, with the image metadata of `image` and `avatar` (media.ts), as
 * one object literal: the keys in the order `attachMedia` would give (each image field's siblings
 * right after it; test/server/media-builders.test.ts checks), at a fraction of its cost.
 * attachMedia copies a new object key by key, about 19 µs for a page of 21 posts, this well under
 * one; the feed and explore answer pages of posts.
 */
export function toPostWithMedia(row: PostRow, media: MediaMap, items: readonly StoredMediaItem[] = storedMedia(row.media, row.image)): Post {
  const image = postImageInfo(items, row.image, media)
  const avatar = mediaOf(media, row.avatar)
  return {
    id: row.id,
    content: row.content,
    image: row.image,
    image_width: image?.width ?? null,
    image_height: image?.height ?? null,
    image_blurhash: image?.blurhash ?? null,
    media: toPostMedia(items, media),
    is_public: row.isPublic,
    likes_count: row.likesCount,
    comments_count: row.commentsCount,
    user_liked: Boolean(row.userLiked),
    bookmarked: Boolean(row.bookmarked),
    created_at: formatDateTime(row.createdAt),
    edited_at: row.editedAt === null ? null : formatDateTime(row.editedAt),
    mentions: toMentions(row.mentions),
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

/**
 * Posts for an answer: one media lookup for the page (media.ts) of what the posts do not carry
 * themselves (the authors' avatars, and images stored before their metadata was: post-media.ts),
 * none when that is nothing; then toPostWithMedia.
 */
export async function postsWithMedia(db: AnyDb, rows: readonly PostRow[]): Promise<Post[]> {
  // Each row's media column parsed once, for the lookup and the answer.
  const items = rows.map((row) => storedMedia(row.media, row.image))
  const media = await mediaInfo(db, rows.flatMap((row, i) => [row.avatar, ...unrecordedPaths(items[i])]))
  return rows.map((row, i) => toPostWithMedia(row, media, items[i]))
}

/** Posts with author and `user_liked` for `viewerId`; callers add where, order and paging. */
export function selectPosts(db: ReadDb, viewerId: number | null) {
  return selectPostsFor(db, viewerKey(viewerId))
}

/** selectPosts for a viewer given as a key (0: anonymous) or a placeholder, for prepared queries. */
export function selectPostsFor(db: AnyDb, viewer: number | Placeholder) {
  return db
    .select(postColumns(viewer))
    .from(posts)
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, viewer)))
}

/**
 * The visibility rule (decisions §3, and private accounts): public and by an account that is not
 * private, or the caller is the author or one of the author's followers; and no block between them
 * nor a suspension hides the author (relations.ts).
 */
export function visibleTo(viewerId: number | null): SQL {
  return visibleToKey(viewerKey(viewerId))
}

/**
 * The post's author (`posts.user_id`) is not a private account. Joined as `users` (the Post
 * queries join the author), it is the joined row's column; otherwise one probe of the users
 * primary key, evaluated only for a public post (SQLite stops at the first false of an AND).
 */
export function authorNotPrivate(joined: boolean): SQL {
  return joined ? sql`${users.isPrivate} = 0` : sql`not exists (select 1 from ${users} pu where pu.id = ${posts.userId} and pu.is_private = 1)`
}

/** `viewer` follows the post's author: one probe of the follows primary key. */
function viewerFollowsAuthor(viewer: number | Placeholder | SQL): SQL {
  return sql`exists (select 1 from ${follows} where ${follows.followerId} = ${viewer} and ${follows.followingId} = ${posts.userId})`
}

/**
 * visibleTo for a viewer given as a key (0: anonymous) or a placeholder; `joined` when the query
 * joins the author as `users` (authorNotPrivate).
 */
export function visibleToKey(viewer: number | Placeholder | SQL, joined = false): SQL {
  const allowed = or(and(eq(posts.isPublic, true), authorNotPrivate(joined)), eq(posts.userId, viewer), viewerFollowsAuthor(viewer))!
  return and(allowed, authorShownTo(viewer, posts.userId))!
}

/**
 * What a list of public posts (explore, search, a hashtag's page) may show `viewer`, the author
 * joined as `users`: a public post whose author the viewer may see (relations.ts), and whose author
 * is not private unless the viewer is the author or follows them. So a private account's posts
 * never reach those lists for anyone else, and a follower sees them as in the feed.
 */
export function listedTo(viewer: number | Placeholder): SQL {
  return and(
    eq(posts.isPublic, true),
    or(eq(users.isPrivate, false), eq(posts.userId, viewer), viewerFollowsAuthor(viewer)),
    authorShownTo(viewer, posts.userId),
  )!
}

/**
 * `posts.id` is one of the placeholder `ids`, a JSON array: one prepared statement whatever the
 * page's length (an `IN (?, ?, …)` list would be a new statement per length).
 */
export function idInList(): SQL {
  return sql`${posts.id} in (select value from json_each(${sql.placeholder('ids')}))`
}

/**
 * The rows of a page of feed post ids, in no order (primary-key lookups); placeholders `ids` and
 * `viewer`. The timeline holds only posts the viewer may see, but a suspension can hide an author
 * after the fact: the ids query leaves those out, and this repeats the rule.
 */
const postsByIds = prepared((db) =>
  selectPostPageFor(db, sql.placeholder('viewer'))
    .where(and(idInList(), authorShownTo(sql.placeholder('viewer'), posts.userId)))
    .prepare(),
)

/**
 * The ones among a page of post ids that a list of public posts may show the viewer (listedTo), for
 * postPage; placeholders `ids` and `viewer`. Explore's pages and post search's answer.
 */
export const publicPostsByIds = prepared((db) => selectPostPageFor(db, sql.placeholder('viewer')).where(and(idInList(), listedTo(sql.placeholder('viewer')))).prepare())

/** The two readers: `reads` for lookups of a page or less, `scans` for what scans (services.ts). */
export interface Readers {
  reads: ReadDb
  scans: ReadDb
}

export interface Paging {
  page: number
  limit: number
}

/** One more row than the page holds tells whether another page exists. */
export function pageOf<T, R>(rows: T[], { page, limit }: Paging, map: (row: T) => R) {
  return { items: rows.slice(0, limit).map(map), page, has_more: rows.length > limit }
}

const newestFirst = [desc(posts.createdAt), desc(posts.id)]

/**
 * The feed computed directly from follows and posts: followed users' posts and the caller's own,
 * newest first. Each author contributes at most the newest page·limit+1 posts (an index range of
 * `posts_user_created_idx` per author), so the sort covers (authors × page depth) rows, not every
 * post the authors ever wrote. The feed's definition, and its answer where the caller's timeline
 * cannot answer exactly (see timelines.ts).
 */
export function directFeedQuery(db: ReadDb, viewerId: number, { page, limit }: Paging) {
  // Whom the viewer follows, less those muted or suspended (a block has removed the follow).
  const authors = db
    .select({ uid: follows.followingId })
    .from(follows)
    .where(and(eq(follows.followerId, viewerId), unmuted(viewerId, follows.followingId), authorShownTo(viewerId, follows.followingId)))
    .unionAll(db.select({ uid: users.id }).from(users).where(eq(users.id, viewerId)))
    .as('authors')
  const depth = page * limit + 1
  const newestOfAuthor = sql`${posts.id} in (select p2.id from ${posts} as p2 where p2.user_id = ${authors.uid} order by p2.created_at desc, p2.id desc limit ${depth})`
  return db
    .select(postColumns(viewerId))
    .from(authors)
    .innerJoin(posts, newestOfAuthor)
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, viewerId)))
    .orderBy(...newestFirst)
    .limit(limit + 1)
    .offset((page - 1) * limit)
}

/** One author's posts, newest first; non-public ones only for the author and followers. */
export function byUserQuery(db: ReadDb, authorId: number, viewerId: number | null, { page, limit }: Paging) {
  return selectPosts(db, viewerId)
    .where(and(eq(posts.userId, authorId), visibleToKey(viewerKey(viewerId), true)))
    .orderBy(...newestFirst)
    .limit(limit + 1)
    .offset((page - 1) * limit)
}

/** The post `postId` if `viewer` may see it, as a page of one (selectPostPageFor: one JSON value handed over, not seventeen columns mapped). */
export function visiblePostQuery(db: AnyDb, postId: number | Placeholder, viewer: number | Placeholder) {
  return selectPostPageFor(db, viewer).where(and(eq(posts.id, postId), visibleToKey(viewer, true)))
}

const visiblePost = prepared((db) => visiblePostQuery(db, sql.placeholder('post'), sql.placeholder('viewer')).prepare())

/** The post as `viewerId` sees it; 404 when it does not exist or the caller may not see it (no hint which). */
export async function loadVisiblePost(db: ReadDb, postId: number, viewerId: number | null): Promise<PostRow> {
  const found = (await visiblePost(db).get({ post: postId, viewer: viewerKey(viewerId) })) as { rows: string } | undefined
  const row = parsePostRows(found?.rows ?? '[]')[0]
  if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
  return row
}

/** The author as a new post's answer shows it: what the posts counter's update returns. */
interface NewPostAuthor {
  username: string
  full_name: string
  avatar: string
  is_verified: number
  is_private: number
}

/**
 * Creates a post, then tells the fan-out runner (fanout.ts), which writes it into its followers'
 * timelines after this transaction; until then the feed reads it as pending. Raw statements, as
 * few as possible (the write lock is held meanwhile): the posts counter's update returns what the
 * answer needs of the author, and the answer is built from what was written rather than read back.
 * Mentions are resolved before the transaction, on `reads` (none for a text without `@`), and
 * their notifications written in it (mentions.ts).
 */
export async function createPost(db: Db, reads: ReadDb, authorId: number, input: CreatePost, now: Date, fanout: Pick<Fanout, 'notify'>): Promise<Post> {
  const createdAt = now.getTime()
  const image = input.image ?? input.media?.[0].path ?? ''
  const items = input.media ?? (image === '' ? [] : [{ path: image, alt: '' }])
  // What the uploads recorded (width, height, BlurHash...), kept in the post so that no page looks
  // it up again: read before the write lock, as it never changes; the transaction checks ownership.
  const media = mediaColumn(items, await mediaInfo(reads, items.map((item) => item.path)))
  const mentions = await resolveMentions(reads, input.content)
  const mentionsJson = mentionsColumn(mentions)
  const created = await writeTransaction(db, async (tx) => {
    if (input.media) await assertOwnUploads(tx, authorId, input.media.map((item) => item.path))
    else if (input.image) await assertOwnUpload(tx, authorId, input.image)
    const post = (await tx.get<{ id: number }>(sql`
      insert into ${posts} (user_id, content, image, media, is_public, created_at, mentions)
      values (${authorId}, ${input.content}, ${image}, ${media}, ${input.is_public ? 1 : 0}, ${createdAt}, ${mentionsJson}) returning id`))!
    const author = (await tx.get<NewPostAuthor>(sql`
      update ${users} set posts_count = posts_count + 1 where id = ${authorId}
      returning username, full_name, avatar, is_verified, is_private`))!
    await attachHashtags(tx, post.id, extractHashtags(input.content), input.is_public && !author.is_private)
    if (mentions.length > 0) await notifyMentions(tx, authorId, mentionedIds(mentions), { post: post.id }, (viewer) => visibleToKey(viewer), now)
    return {
      id: post.id,
      content: input.content,
      image,
      media,
      isPublic: input.is_public,
      likesCount: 0,
      commentsCount: 0,
      createdAt,
      editedAt: null,
      mentions: mentionsJson,
      userId: authorId,
      username: author.username,
      fullName: author.full_name,
      avatar: author.avatar,
      isVerified: Boolean(author.is_verified),
      userLiked: false,
      bookmarked: false,
    } satisfies PostRow
  })
  fanout.notify()
  return (await postsWithMedia(db, [created]))[0]
}

/**
 * A feed page, ids first: the page's ids from the caller's timeline (an index range), then their
 * rows (primary-key lookups), both prepared, on `reads` (on `scans` for a deep page). The direct
 * query, which reads every followee, answers on `scans` when the timeline cannot answer exactly,
 * or when a post of the page has gone since it was fanned out.
 */
export async function getFeed(dbs: Readers, viewerId: number, paging: Paging) {
  const { page, limit } = paging
  const db = readerForPage(dbs, paging)
  const ids = await timelineFeedIds(db, viewerId, page * limit + 1)
  const pageIds = ids?.slice((page - 1) * limit)
  let rows: PostRow[] | undefined
  if (pageIds) {
    const found = await postPage(postsByIds(db), pageIds, viewerId)
    if (found.length === pageIds.length) rows = found
  }
  const { items, has_more } = pageOf(rows ?? (await directFeedQuery(dbs.scans, viewerId, paging)), paging, (row) => row)
  return { posts: await postsWithMedia(dbs.reads, items), page, has_more }
}

export async function getPostsByUser(db: ReadDb, ref: number | string, viewerId: number | null, paging: Paging) {
  const author = await findVisibleUser(db, ref, viewerId)
  await assertSeesAccount(db, author, viewerId)
  const { items, page, has_more } = pageOf(await byUserQuery(db, author.id, viewerId, paging), paging, (row) => row)
  return { posts: await postsWithMedia(db, items), page, has_more }
}
