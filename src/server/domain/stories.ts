/**
 * Stories: 24-hour text, image and video posts. Every read filters on `expires_at > now`, so an
 * expired story vanishes from the feed, the profile count and the view at the same instant.
 */
import { TRPCError } from '@trpc/server'
import { and, asc, eq, gt, inArray, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import { STORY_DURATION, STORY_FONT_SIZE, STORY_TTL_MS, type StoryCreate } from '../../shared/schemas/stories.js'
import type { Story, StoryFeedGroup } from '../../shared/types.js'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { follows, stories, storyViews, uploads, users } from '../db/schema.js'
import { assertOwnUpload } from '../uploads/references.js'
import { withMedia, withMediaOne, type Bare } from './media.js'
import { mentionedIds, mentionsColumn, notifyMentions, resolveMentions } from './mentions.js'
import { notify } from './notifications.js'
import { authorShownTo, authorVisibleTo, unmuted } from './relations.js'
import { formatDateTime, toStory } from './views.js'

type UserRow = typeof users.$inferSelect

/** The media of an image story must be an image and that of a video story a video (by the sniffed mime of the upload). */
async function assertMediaMatches(db: Db | Tx, userId: number, path: string, contentType: 'image' | 'video') {
  await assertOwnUpload(db, userId, path)
  const [upload] = await db.select({ mime: uploads.mime }).from(uploads).where(eq(uploads.path, path)).limit(1)
  const kind = upload.mime.split('/')[0]
  if (kind !== contentType) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: `media_url is ${kind === 'video' ? 'a video' : `an ${kind}`} (${upload.mime}); content_type must match it` })
  }
}

/**
 * Publishes a story for STORY_TTL_MS. The accounts its text mentions are told (`mention`) when they
 * may see it (mentions.ts; resolved before the transaction, on `reads`).
 */
export async function createStory(db: Db, reads: ReadDb, author: Pick<UserRow, 'id' | 'username' | 'fullName' | 'avatar'>, input: StoryCreate, now: Date): Promise<Story> {
  if (input.content_type !== 'text') await assertMediaMatches(db, author.id, input.media_url!, input.content_type)
  const mentions = await resolveMentions(reads, input.text_content ?? '')
  const story = await writeTransaction(db, async (tx) => {
    const [made] = await tx
      .insert(stories)
      .values({
        userId: author.id,
        contentType: input.content_type,
        mediaUrl: input.media_url ?? '',
        mediaAlt: input.content_type === 'text' ? '' : (input.media_alt ?? ''),
        textContent: input.text_content ?? null,
        backgroundColor: input.background_color,
        textColor: input.text_color,
        fontFamily: input.font_family,
        fontSize: input.font_size ?? STORY_FONT_SIZE.default,
        textAlignment: input.text_alignment,
        duration: input.duration ?? STORY_DURATION.default,
        privacyType: input.privacy_type,
        createdAt: now.getTime(),
        expiresAt: now.getTime() + STORY_TTL_MS,
        mentions: mentionsColumn(mentions),
      })
      .returning()
    if (mentions.length > 0) {
      await notifyMentions(tx, author.id, mentionedIds(mentions), { story: made.id, now: now.getTime() }, (viewer) => storyVisibleTo(viewer, now.getTime()), now)
    }
    return made
  })
  return withMediaOne(db, toStory(story, author))
}

/**
 * Active stories of `viewer` and of whom they follow, oldest first, less those of accounts the
 * viewer muted or that are suspended (a block removed the follow); values or placeholders.
 */
function storyFeedSelect(db: ReadDb, viewer: number | Placeholder, now: number | Placeholder) {
  const followed = db.select({ id: follows.followingId }).from(follows).where(eq(follows.followerId, viewer))
  return db
    .select({
      id: stories.id,
      createdAt: stories.createdAt,
      userId: users.id,
      username: users.username,
      fullName: users.fullName,
      avatar: users.avatar,
      isVerified: users.isVerified,
    })
    .from(stories)
    .innerJoin(users, eq(users.id, stories.userId))
    .where(
      and(
        or(eq(stories.userId, viewer), and(inArray(stories.userId, followed), unmuted(viewer, stories.userId), authorVisibleTo(viewer))),
        gt(stories.expiresAt, now),
      ),
    )
    .orderBy(asc(stories.createdAt), asc(stories.id))
}

/** The feed's one query (exported so a test can check its plan). */
export function storyFeedQuery(db: ReadDb, viewerId: number, now: Date) {
  return storyFeedSelect(db, viewerId, now.getTime())
}

const storyFeedRows = prepared((db) => storyFeedSelect(db, sql.placeholder('viewer'), sql.placeholder('now')).prepare())

/**
 * The caller's own active stories and those of the users they follow, one group per author:
 * own group first, then the author with the newest story first. Public stories of users the
 * caller does not follow are not in the feed (as on Instagram); they can still be opened by id.
 * One prepared query, served by the follows primary key and `stories_user_expires_idx`.
 */
export async function storyFeed(db: ReadDb, viewerId: number, now: Date): Promise<StoryFeedGroup[]> {
  const rows = await storyFeedRows(db).all({ viewer: viewerId, now: now.getTime() })
  const groups = new Map<number, Bare<StoryFeedGroup> & { latest: number }>()
  for (const row of rows) {
    let group = groups.get(row.userId)
    if (!group) {
      group = {
        user_id: row.userId,
        username: row.username,
        full_name: row.fullName,
        avatar: row.avatar,
        is_verified: row.isVerified,
        story_count: 0,
        story_ids: [],
        latest_story: '',
        latest: 0,
      }
      groups.set(row.userId, group)
    }
    // Rows come oldest first, so story_ids is in playing order and the last row is the latest.
    group.story_count++
    group.story_ids.push(row.id)
    group.latest = row.createdAt
  }
  const sorted = [...groups.values()]
    .sort((a, b) => Number(b.user_id === viewerId) - Number(a.user_id === viewerId) || b.latest - a.latest || b.user_id - a.user_id)
    .map(({ latest, ...group }) => ({ ...group, latest_story: formatDateTime(latest) }))
  return withMedia(db, sorted)
}

/**
 * The story visibility rule, as a condition on `stories`: unexpired at `now`, and public (by an
 * account that is not private), the viewer's own, or by an account the viewer follows; and no block or suspension hides its author
 * (relations.ts). Opening, reporting and deleting a story all apply it.
 */
export function storyVisibleTo(viewer: number | SQL, now: number): SQL {
  return sql`(${stories.expiresAt} > ${now}
    and ((${stories.privacyType} = 'public' and not exists (select 1 from ${users} pu where pu.id = ${stories.userId} and pu.is_private = 1))
      or ${stories.userId} = ${viewer}
      or exists (select 1 from ${follows} where ${follows.followerId} = ${viewer} and ${follows.followingId} = ${stories.userId}))
    and ${authorShownTo(viewer, stories.userId)})`
}

/**
 * Opens a story: 404 when it does not exist, has expired, is a followers-only story the caller
 * may not see, or a block or a suspension hides its author from the caller. A viewer other than the author is recorded once (the story_views primary
 * key); only a new view row raises `views_count` and notifies the author, in one transaction.
 */
export async function viewStory(db: Db, viewer: Pick<UserRow, 'id'>, storyId: number, now: Date): Promise<Story> {
  const viewed = await writeTransaction(db, async (tx) => {
    const [found] = await tx
      .select({
        story: stories,
        author: { username: users.username, fullName: users.fullName, avatar: users.avatar },
      })
      .from(stories)
      .innerJoin(users, eq(users.id, stories.userId))
      .where(and(eq(stories.id, storyId), storyVisibleTo(viewer.id, now.getTime())))
      .limit(1)
    // A story the caller may not see answers exactly like one that does not exist, so its existence does not leak.
    if (!found) throw new TRPCError({ code: 'NOT_FOUND', message: 'Story not found' })
    const { story, author } = found
    if (story.userId === viewer.id) return toStory(story, author)

    const inserted = await tx
      .insert(storyViews)
      .values({ storyId: story.id, viewerId: viewer.id, createdAt: now.getTime() })
      .onConflictDoNothing()
      .returning({ storyId: storyViews.storyId })
    if (inserted.length === 0) return toStory(story, author)

    const [counted] = await tx
      .update(stories)
      .set({ viewsCount: sql`${stories.viewsCount} + 1` })
      .where(eq(stories.id, story.id))
      .returning({ viewsCount: stories.viewsCount })
    await notify(tx, { userId: story.userId, actorId: viewer.id, type: 'story_view', storyId: story.id }, now)
    return toStory({ ...story, viewsCount: counted.viewsCount }, author)
  })
  return withMediaOne(db, viewed)
}
