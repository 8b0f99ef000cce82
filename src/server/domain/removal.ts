/**
 * Deleting content: a post, a comment, a story (and, below, a whole account). Each runs in one
 * write transaction that removes the rows that hang off the target, keeps every counter shown on
 * posts, profiles and hashtags exact, and only then (after commit) deletes the files that no row
 * references any more, so a failed transaction never leaves a row pointing at a missing file.
 *
 * Moderation's "remove" action calls these with `{ moderator }`: the ownership and
 * visibility rules are skipped (404 only when the target does not exist), and open reports about
 * the target are left for the caller, which resolves them and writes its record in `within`, so
 * that the deletion, the resolution and the record commit together. A user's own deletion
 * (`{ userId }`) deletes the open reports about it: they would point at nothing.
 *
 * Statements are lean `sql`, as everywhere under the write lock; raw results are read by index.
 */
import { TRPCError } from '@trpc/server'
import { sql, type SQL } from 'drizzle-orm'
import { writeTransaction, type Tx } from '../db/client.js'
import type { Services } from '../services.js'
import { detachHashtags } from './hashtags.js'
import { causedBy, notificationsCausedBy } from './notifications.js'
import { postMediaPaths } from './post-media.js'
import { visibleTo } from './posts.js'
import { assertPassword } from './sessions.js'
import { storyVisibleTo } from './stories.js'

/** Who deletes: a user (ownership rules apply) or a moderator (by name, for the record). */
export type Remover = { userId: number } | { moderator: string }

/**
 * The caller's own writes, run in the deletion's transaction once the rows are gone and before
 * commit; a throw rolls the deletion back. `comments` are the ids of the comments that went with a
 * post or with a comment (its replies; none for a story).
 */
export type WithinRemoval = (tx: Tx, removed: { comments: number[] }) => Promise<void>

const notFound = (what: string) => new TRPCError({ code: 'NOT_FOUND', message: `${what} not found` })

/** Deletes storage keys after the transaction that released them committed; a failure is logged, never thrown. */
async function deleteFiles(services: Services, keys: string[]): Promise<void> {
  await Promise.all(
    keys.map((key) =>
      services.storage.delete(key).catch((error) => services.logger.error('deleting a released file failed', { key, error: String(error) })),
    ),
  )
}

/**
 * Whether a row of `owner` names `path`: index ranges of the owner's posts (their image, or an item
 * of their carousel: the path quoted in the media column's JSON), comments, stories and uploads
 * (exported for its query plan).
 */
export function uploadReferencedQuery(owner: number, path: string): SQL {
  return sql`
    select exists (select 1 from posts where user_id = ${owner} and (image = ${path} or instr(media, ${JSON.stringify(path)}) > 0))
        or exists (select 1 from comments where user_id = ${owner} and image = ${path})
        or exists (select 1 from stories where user_id = ${owner} and media_url = ${path})
        or exists (select 1 from users where id = ${owner} and avatar = ${path})
        or exists (select 1 from uploads where user_id = ${owner} and poster = ${path})`
}

/**
 * A post's rows in home timelines. A timeline holds a post only if its owner follows the author
 * (unfollow prunes), so these are primary-key probes over the author's followers and the author
 * (exported for its query plan).
 */
export function postTimelineRowsQuery(post: { id: number; authorId: number; createdAt: number }): SQL {
  return sql`
    delete from timelines where user_id in (select follower_id from follows where following_id = ${post.authorId} union all select ${post.authorId})
      and created_at = ${post.createdAt} and post_id = ${post.id}`
}

/**
 * Drops the uploads rows of `paths` that no row references any more and answers their storage
 * keys (a video's poster frame too, once its video goes). Only the owner of an upload can
 * reference it (references.ts checks that at every write), so the check reads the owner's own
 * rows only: index ranges of their posts, comments and stories, never a whole table.
 */
async function releaseUploads(tx: Tx, paths: Iterable<string>): Promise<string[]> {
  const released: string[] = []
  const pending = [...new Set([...paths].filter((path) => path !== ''))]
  while (pending.length > 0) {
    const path = pending.pop()!
    const [upload] = await tx.values<[number, number | null, string | null]>(sql`select id, user_id, poster from uploads where path = ${path}`)
    // No row: not an upload (nothing to free). No owner: a generated file, which expires by itself.
    if (!upload || upload[1] === null) continue
    const [found] = await tx.values<[number]>(uploadReferencedQuery(upload[1], path))
    if (found[0]) continue
    await tx.run(sql`delete from uploads where id = ${upload[0]}`)
    released.push(path)
    if (upload[2]) pending.push(upload[2])
  }
  return released
}

/**
 * Removes one post and everything that hangs off it (no ownership check: the callers do that).
 * Answers the ids of its comments, and the paths its image and its comments' images were at, to
 * release once the rows are gone.
 */
async function removePost(
  tx: Tx,
  post: { id: number; authorId: number; createdAt: number },
  dropReports: boolean,
): Promise<{ comments: number[]; paths: string[] }> {
  const { id, authorId, createdAt } = post
  const comments = await tx.values<[number, string]>(sql`select id, image from comments where post_id = ${id}`)
  const [postRow] = await tx.values<[string, string | null]>(sql`select image, media from posts where id = ${id}`)
  if (dropReports) {
    const commentIds = JSON.stringify(comments.map((row) => row[0]))
    await tx.run(sql`
      delete from reports where status = 'open' and ((target_type = 'post' and target_id = ${id})
        or (target_type = 'comment' and target_id in (select value from json_each(${commentIds}))))`)
  }
  await detachHashtags(tx, sql`select ${id}`)
  // Every notification about the post (likes, comments, mentions, replies), whoever it went to: notifications_post_idx.
  await tx.run(sql`delete from notifications where post_id = ${id}`)
  await tx.run(sql`delete from likes where post_id = ${id}`)
  await tx.run(sql`delete from bookmarks where post_id = ${id}`)
  await tx.run(sql`delete from comments where post_id = ${id}`)
  // A post still pending fan-out is in no timeline yet, and the fan-out reads pending posts from
  // `posts` in its own write transaction, so once this commits it can never write this one.
  await tx.run(postTimelineRowsQuery(post))
  await tx.run(sql`delete from posts where id = ${id}`)
  await tx.run(sql`update users set posts_count = posts_count - 1 where id = ${authorId}`)
  return { comments: comments.map((row) => row[0]), paths: [...postMediaPaths({ image: postRow[0], media: postRow[1] }), ...comments.map((row) => row[1])] }
}

/** Deletes a post (author only for a user: 403 when they can see it, 404 when they cannot or it does not exist). */
export async function deletePost(services: Services, postId: number, by: Remover, within?: WithinRemoval): Promise<void> {
  const released = await writeTransaction(services.db, async (tx) => {
    const visible = 'userId' in by ? visibleTo(by.userId) : sql`1`
    const [row] = await tx.values<[number, number, number]>(sql`select user_id, created_at, (${visible}) from posts where id = ${postId}`)
    if (!row || !row[2]) throw notFound('Post')
    if ('userId' in by && row[0] !== by.userId) throw new TRPCError({ code: 'FORBIDDEN', message: 'You can only delete your own posts' })
    const removed = await removePost(tx, { id: postId, authorId: row[0], createdAt: row[1] }, 'userId' in by)
    const released = await releaseUploads(tx, removed.paths)
    await within?.(tx, { comments: removed.comments })
    return released
  })
  await deleteFiles(services, released)
}

/**
 * Deletes a comment and, for a top-level comment, its replies: its author or the post's author may
 * (403 for anyone else who can see it; 404 when the comment does not exist or its post is not
 * visible to the caller). Every count moves in the same transaction: the post's comments_count by
 * the comments that went, a reply's parent's replies_count by one; and the notifications they
 * caused go (a comment, a reply, mentions), with the uploads only they used.
 */
export async function deleteComment(services: Services, commentId: number, by: Remover, within?: WithinRemoval): Promise<void> {
  const released = await writeTransaction(services.db, async (tx) => {
    const visible = 'userId' in by ? visibleTo(by.userId) : sql`1`
    const [row] = await tx.values<[number, number, number, string, number, number, number | null]>(sql`
      select c.user_id, c.post_id, c.created_at, c.image, posts.user_id, (${visible}), c.parent_id
      from comments c join posts on posts.id = c.post_id where c.id = ${commentId}`)
    if (!row || !row[5]) throw notFound('Comment')
    // Rows of raw statements are indexable but not iterable on every driver.
    const commenterId = row[0], postId = row[1], createdAt = row[2], image = row[3], postAuthorId = row[4], parentId = row[6]
    if ('userId' in by && by.userId !== commenterId && by.userId !== postAuthorId) {
      throw new TRPCError({ code: 'FORBIDDEN', message: 'You can only delete your own comments or comments on your posts' })
    }
    // A top-level comment's replies go with it: one range of comments_post_parent_created_idx.
    const replies =
      parentId === null ? await tx.values<[number, number, number, string]>(sql`select id, user_id, created_at, image from comments where post_id = ${postId} and parent_id = ${commentId}`) : []
    const replyIds = replies.map((reply) => reply[0])
    const gone = JSON.stringify([commentId, ...replyIds])
    if ('userId' in by) await tx.run(sql`delete from reports where status = 'open' and target_type = 'comment' and target_id in (select value from json_each(${gone}))`)
    await tx.run(sql`delete from comments where id in (select value from json_each(${gone}))`)
    await tx.run(sql`update posts set comments_count = comments_count - ${1 + replies.length} where id = ${postId}`)
    if (parentId !== null) await tx.run(sql`update comments set replies_count = replies_count - 1 where id = ${parentId}`)
    // Notifications name the post, not the comment: the one this comment caused is the post
    // author's, by this actor, at this instant (one of them, should two share the millisecond);
    // its reply's and mentions' are those of this actor about this post at this instant
    // (notifications_post_idx), and so are each reply's.
    await tx.run(sql`
      delete from notifications where id = (
        select id from notifications where user_id = ${postAuthorId} and actor_id = ${commenterId}
          and type = 'comment' and post_id = ${postId} and created_at = ${createdAt} order by id limit 1)`)
    await tx.run(sql`
      delete from notifications where post_id = ${postId} and actor_id = ${commenterId} and type in ('mention', 'reply') and created_at = ${createdAt}`)
    if (replies.length > 0) await deleteCommentNotifications(tx, postId, replies.map((reply) => [reply[1], reply[2]]))
    const released = await releaseUploads(tx, [image, ...replies.map((reply) => reply[3])])
    await within?.(tx, { comments: replyIds })
    return released
  })
  await deleteFiles(services, released)
}

/**
 * Deletes the notifications that comments under `postId` caused (a comment, a reply, mentions),
 * each comment given as its author and instant: one range of notifications_post_idx, whatever
 * their number.
 */
async function deleteCommentNotifications(tx: Tx, postId: number, made: Array<[actorId: number, createdAt: number]>): Promise<void> {
  await tx.run(sql`
    delete from notifications where post_id = ${postId} and type in ('comment', 'mention', 'reply')
      and (actor_id, created_at) in (select value ->> 0, value ->> 1 from json_each(${JSON.stringify(made)}))`)
}

/**
 * Deletes a story: its author may, even once it expired; anyone else who can see it gets a 403,
 * and a 404 when it does not exist or they cannot see it (storyVisibleTo).
 */
export async function deleteStory(services: Services, storyId: number, by: Remover, within?: WithinRemoval): Promise<void> {
  const released = await writeTransaction(services.db, async (tx) => {
    const viewer = 'userId' in by ? by.userId : 0
    const [row] = await tx.values<[number, string, number]>(sql`
      select user_id, media_url, ${storyVisibleTo(viewer, services.clock().getTime())}
      from stories where id = ${storyId}`)
    if (!row) throw notFound('Story')
    const authorId = row[0], mediaUrl = row[1], visible = row[2]
    if ('userId' in by && authorId !== by.userId) {
      if (!visible) throw notFound('Story')
      throw new TRPCError({ code: 'FORBIDDEN', message: 'You can only delete your own stories' })
    }
    if ('userId' in by) await tx.run(sql`delete from reports where status = 'open' and target_type = 'story' and target_id = ${storyId}`)
    await tx.run(sql`delete from notifications where story_id = ${storyId}`)
    await tx.run(sql`delete from story_views where story_id = ${storyId}`)
    await tx.run(sql`delete from stories where id = ${storyId}`)
    const released = await releaseUploads(tx, [mediaUrl])
    await within?.(tx, { comments: [] })
    return released
  })
  await deleteFiles(services, released)
}

/**
 * Erases an account after checking its password (403 when wrong): its posts (with everything
 * that hangs off them), comments, likes, follows both ways, stories, story views, notifications
 * (its own and those it caused, with their queued pushes), sessions and their push subscriptions,
 * mail, reset and verification tokens, two-factor secrets and recovery codes, bookmarks (its own
 * and others' of its posts), follow requests, blocks and mutes both ways, reports by it or about it,
 * uploads, timelines (and their pending backfills both ways) and rate-limit counters, then the
 * user row, which frees the username and email. Every counter on other users' posts, profiles,
 * stories and hashtags is corrected first, in the same transaction; the files go after commit.
 * The moderation record (`moderation_actions`) stays: it is the operator's, and names the account
 * by id only.
 */
export async function deleteAccount(services: Services, userId: number, password: string): Promise<void> {
  const [user] = await services.db.values<[string]>(sql`select password_hash from users where id = ${userId}`)
  if (!user) throw notFound('User')
  await assertPassword(user[0], password)
  // The notifications it caused, found by a scan before the transaction (the actor is in no index).
  const caused = await notificationsCausedBy(services.scans, userId)
  const released = await writeTransaction(services.db, async (tx) => {
    const u = userId
    const ownPosts = sql`select id from posts where user_id = ${u}`
    const ownStories = sql`select id from stories where user_id = ${u}`
    const files = (await tx.values<[string]>(sql`select path from uploads where user_id = ${u}`)).map((row) => row[0])
    // Others' comments on this account's posts go with the posts; their images may then be free.
    const othersImages = (await tx.values<[string]>(sql`
      select image from comments where post_id in (${ownPosts}) and user_id <> ${u} and image <> ''`)).map((row) => row[0])
    // Others' replies to this account's comments on others' posts go with the comments (each found
    // by its parent's range of comments_post_parent_created_idx), with their notifications and images.
    const orphans = await tx.values<[number, number, number, number, string]>(sql`
      select r.id, r.post_id, r.user_id, r.created_at, r.image from comments c
      join comments r on r.post_id = c.post_id and r.parent_id = c.id
      where c.user_id = ${u} and c.parent_id is null and r.user_id <> ${u} and c.post_id not in (${ownPosts})`)
    // Every comment that goes and is counted on a post that stays: this account's, and the orphans.
    const goneComments = sql`(select id from comments where user_id = ${u} union all select value from json_each(${JSON.stringify(orphans.map((row) => row[0]))}))`

    // Counters on what stays: each row of this account that counted toward them takes its one off.
    await tx.run(sql`update posts set likes_count = likes_count - 1 where id in (select post_id from likes where user_id = ${u}) and user_id <> ${u}`)
    await tx.run(sql`
      update posts set comments_count = comments_count - (select count(*) from comments c where c.post_id = posts.id and c.id in ${goneComments})
      where id in (select post_id from comments where id in ${goneComments}) and user_id <> ${u}`)
    await tx.run(sql`
      update comments set replies_count = replies_count - (select count(*) from comments r where r.post_id = comments.post_id and r.parent_id = comments.id and r.user_id = ${u})
      where id in (select parent_id from comments where user_id = ${u} and parent_id is not null) and user_id <> ${u}`)
    const orphansByPost = new Map<number, Array<[number, number]>>()
    for (const row of orphans) orphansByPost.set(row[1], [...(orphansByPost.get(row[1]) ?? []), [row[2], row[3]]])
    for (const [postId, made] of orphansByPost) await deleteCommentNotifications(tx, postId, made)
    await tx.run(sql`delete from comments where id in (select value from json_each(${JSON.stringify(orphans.map((row) => row[0]))}))`)
    await tx.run(sql`update users set followers_count = followers_count - 1 where id in (select following_id from follows where follower_id = ${u})`)
    await tx.run(sql`update users set following_count = following_count - 1 where id in (select follower_id from follows where following_id = ${u})`)
    await tx.run(sql`update stories set views_count = views_count - 1 where id in (select story_id from story_views where viewer_id = ${u}) and user_id <> ${u}`)
    await detachHashtags(tx, ownPosts)

    // Timelines: its posts leave its followers' (a timeline holds a post only while its owner follows the author), then its own.
    await tx.run(sql`delete from timelines where user_id in (select follower_id from follows where following_id = ${u}) and post_id in (${ownPosts})`)
    await tx.run(sql`delete from timelines where user_id = ${u}`)
    await tx.run(sql`delete from timeline_floors where user_id = ${u}`)
    await tx.run(sql`delete from timeline_pulled_authors where user_id = ${u}`)
    // Pending backfills it is owed, and those its followers are owed of it (found through its followers: exact keys, no scan).
    await tx.run(sql`delete from timeline_backfills where follower_id = ${u}`)
    await tx.run(sql`delete from timeline_backfills where (follower_id, followee_id) in (select follower_id, following_id from follows where following_id = ${u})`)

    await tx.run(sql`delete from notifications where user_id = ${u}`)
    await tx.run(sql`delete from notifications where ${causedBy(caused)}`)
    await tx.run(sql`delete from likes where user_id = ${u}`)
    await tx.run(sql`delete from likes where post_id in (${ownPosts})`)
    await tx.run(sql`delete from bookmarks where user_id = ${u}`)
    await tx.run(sql`delete from bookmarks where post_id in (${ownPosts})`)
    await tx.run(sql`delete from comments where user_id = ${u}`)
    await tx.run(sql`delete from comments where post_id in (${ownPosts})`)
    await tx.run(sql`delete from story_views where viewer_id = ${u}`)
    await tx.run(sql`delete from story_views where story_id in (${ownStories})`)
    await tx.run(sql`delete from stories where user_id = ${u}`)
    await tx.run(sql`delete from posts where user_id = ${u}`)
    await tx.run(sql`delete from follows where follower_id = ${u}`)
    await tx.run(sql`delete from follows where following_id = ${u}`)
    await tx.run(sql`delete from follow_requests where requester_id = ${u}`)
    await tx.run(sql`delete from follow_requests where target_id = ${u}`)
    await tx.run(sql`delete from blocks where blocker_id = ${u} or blocked_id = ${u}`)
    await tx.run(sql`delete from mutes where muter_id = ${u} or muted_id = ${u}`)
    await tx.run(sql`delete from reports where reporter_id = ${u} or target_user_id = ${u}`)
    // Push, mail and two-factor rows (migration 0019); their foreign keys would take them with the user row, but the list here is the record.
    await tx.run(sql`delete from push_subscriptions where user_id = ${u}`)
    await tx.run(sql`delete from account_tokens where user_id = ${u}`)
    await tx.run(sql`delete from login_challenges where user_id = ${u}`)
    await tx.run(sql`delete from recovery_codes where user_id = ${u}`)
    await tx.run(sql`delete from totp_credentials where user_id = ${u}`)
    await tx.run(sql`delete from mail_outbox where user_id = ${u}`)
    await tx.run(sql`delete from sessions where user_id = ${u}`)
    await tx.run(sql`delete from uploads where user_id = ${u}`)
    await tx.run(sql`delete from rate_limits where key like ${`%:user:${u}`}`)
    await tx.run(sql`delete from users where id = ${u}`)
    return [...files, ...(await releaseUploads(tx, [...othersImages, ...orphans.map((row) => row[4]).filter((image) => image !== '')]))]
  })
  await deleteFiles(services, released)
}
