/**
 * Bookmarks: posts a user saves to look at later (Instagram's saved posts, Mastodon's and Bluesky's
 * bookmarks). Private to their owner: nobody else can list them or learn who saved a post. Saving
 * needs a post the caller may see (404 otherwise, as for a like); the list leaves out the posts the
 * owner can no longer see (made followers-only, its author blocked, suspended or turned private),
 * in the query, so its pages stay full. `bookmarked` on every Post is posts.ts's.
 */
import { TRPCError } from '@trpc/server'
import { and, desc, eq, sql, type Placeholder } from 'drizzle-orm'
import type { Post } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { bookmarks, likes, posts, users } from '../db/schema.js'
import { readerForPage } from './page-depth.js'
import { pageOf, postColumns, postsWithMedia, visibleTo, visibleToKey, type Paging, type Readers } from './posts.js'

export interface BookmarkState {
  post_id: number
  bookmarked: boolean
}

/** The post exists and `userId` may see it (posts.ts's rule), under the write lock. */
async function assertVisible(tx: Tx, postId: number, userId: number): Promise<void> {
  const [row] = await tx.values(sql`select 1 from ${posts} where id = ${postId} and ${visibleTo(userId)}`)
  if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: 'Post not found' })
}

/** Saves a post the caller may see (404 otherwise); saving it again changes nothing. The visibility test is part of the insert. */
export async function bookmarkPost(db: Db, userId: number, postId: number, now: Date): Promise<BookmarkState> {
  await writeTransaction(db, async (tx) => {
    const inserted = await tx.run(sql`
      insert into ${bookmarks} (post_id, user_id, created_at)
      select id, ${userId}, ${now.getTime()} from ${posts} where id = ${postId} and ${visibleTo(userId)}
      on conflict do nothing`)
    if (inserted.rowsAffected === 0) await assertVisible(tx, postId, userId)
  })
  return { post_id: postId, bookmarked: true }
}

/**
 * Unsaves a post (idempotent). A saved post the caller can no longer see can still be unsaved (its
 * bookmark says they saw it); 404 only for a post neither saved nor visible, so existence does not leak.
 */
export async function unbookmarkPost(db: Db, userId: number, postId: number): Promise<BookmarkState> {
  await writeTransaction(db, async (tx) => {
    const deleted = await tx.run(sql`delete from ${bookmarks} where post_id = ${postId} and user_id = ${userId}`)
    if (deleted.rowsAffected === 0) await assertVisible(tx, postId, userId)
  })
  return { post_id: postId, bookmarked: false }
}

type Param = number | Placeholder

/**
 * The owner's saved posts they may still see, newest saved first (ties by post id): the owner's range
 * of `bookmarks_user_created_idx` (which carries post_id: no sort), then each post and its author
 * by primary key, tested by the visibility rule before paging.
 */
export function bookmarksQuery(db: ReadDb, owner: Param, limit: Param, offset: Param) {
  return db
    .select(postColumns(owner))
    .from(bookmarks)
    .innerJoin(posts, eq(posts.id, bookmarks.postId))
    .innerJoin(users, eq(users.id, posts.userId))
    .leftJoin(likes, and(eq(likes.postId, posts.id), eq(likes.userId, owner)))
    .where(and(eq(bookmarks.userId, owner), visibleToKey(owner, true)))
    .orderBy(desc(bookmarks.createdAt), desc(bookmarks.postId))
    .limit(limit)
    .offset(offset)
}

const bookmarksPage = prepared((db) => bookmarksQuery(db, sql.placeholder('owner'), sql.placeholder('limit'), sql.placeholder('offset')).prepare())

/** A page of the caller's saved posts (prepared; a deep page on the scan workers). */
export async function listBookmarks(dbs: Readers, ownerId: number, paging: Paging): Promise<{ posts: Post[]; page: number; has_more: boolean }> {
  const rows = await bookmarksPage(readerForPage(dbs, paging)).all({ owner: ownerId, limit: paging.limit + 1, offset: (paging.page - 1) * paging.limit })
  const { items, page, has_more } = pageOf(rows, paging, (row) => row)
  return { posts: await postsWithMedia(dbs.reads, items), page, has_more }
}
