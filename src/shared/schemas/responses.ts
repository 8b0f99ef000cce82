/**
 * The `data` of every social API answer (/api/mobile and the same tRPC procedures). The types of
 * src/shared/types.ts are inferred from these, the route table names one per route as its
 * `output`, the OpenAPI document publishes them (each `id` becomes a named component), and
 * test/server/contract.test.ts parses real answers with them. Objects are strict, so a field the
 * server adds without documenting it here fails that test.
 */
import { z } from 'zod'
import { REPORT_TARGET_TYPES } from './reports.js'
import { STORY_CONTENT_TYPES, STORY_PRIVACY_TYPES } from './stories.js'

const dateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .meta({ id: 'DateTime', description: 'A UTC date-time, `YYYY-MM-DD HH:MM:SS`', examples: ['2026-01-01 12:00:00'] })

const rowId = z.number().int().positive()
const count = z.number().int().nonnegative()
const mediaPath = (what: string) => z.string().describe(`${what}: a path under \`uploads/\`, or "" when there is none`)
const color = z.string().regex(/^#[0-9A-Fa-f]{6}$/).describe('A colour, `#RRGGBB`')

type ImageMetaShape<F extends string> = { [K in `${F}_width` | `${F}_height`]: z.ZodNullable<z.ZodNumber> } & {
  [K in `${F}_blurhash`]: z.ZodNullable<z.ZodString>
}

/** The siblings `F_width`, `F_height`, `F_blurhash` that let an app lay out image field `F` before it loads. */
function imageMeta<F extends string>(field: F): ImageMetaShape<F> {
  const size = (side: string) =>
    z.number().int().positive().nullable().describe(`The ${field} image's ${side} in pixels; null when there is no image or it predates recording sizes`)
  return {
    [`${field}_width`]: size('width'),
    [`${field}_height`]: size('height'),
    [`${field}_blurhash`]: z.string().nullable().describe(`A BlurHash of the ${field} image; null when there is none`),
  } as ImageMetaShape<F>
}

/** Lists page by `page` (from 1) and say whether a next page exists. */
const paging = {
  page: z.number().int().positive(),
  has_more: z.boolean().describe('Whether a next page exists'),
}

export const page = z.strictObject(paging)

/** Logout, deletions and revocations answer `data: null`; the envelope's message says what happened. */
export const nothing = z.null().describe('No data')

// Accounts and sessions

export const sessionUser = z
  .strictObject({
    id: rowId,
    username: z.string(),
    email: z.string(),
    email_verified: z.boolean().describe('Whether the owner has opened a link mailed to the address'),
    full_name: z.string(),
    avatar: mediaPath('The avatar'),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'SessionUser', description: 'The account a session belongs to' })

export const session = z
  .strictObject({
    token: z.string().describe('Opaque bearer token for `Authorization: Bearer ...`'),
    expires_at: dateTime,
    user: sessionUser,
  })
  .meta({ id: 'Session', description: 'A logged-in session (register, login and refresh answer one)' })

export const sessionInfo = z
  .strictObject({
    id: rowId,
    user_agent: z.string(),
    created_at: dateTime,
    last_used_at: dateTime.nullable().describe('When its token was last presented, to about a minute'),
    current: z.boolean().describe('The session making this request'),
  })
  .meta({ id: 'SessionInfo', description: "One of the caller's live sessions; never its token" })

export const sessionList = z.strictObject({ sessions: z.array(sessionInfo) }).meta({ id: 'SessionList', description: "The caller's live sessions" })

export const passwordChanged = z
  .strictObject({ revoked_sessions: count.describe('How many other sessions were revoked') })
  .meta({ id: 'PasswordChanged', description: 'The password changed; every other session of the account is revoked' })

// Users

export const userProfile = z
  .strictObject({
    id: rowId,
    username: z.string(),
    full_name: z.string(),
    bio: z.string(),
    avatar: mediaPath('The avatar'),
    avatar_alt: z.string().describe('The avatar described for screen readers; "" when none'),
    is_verified: z.boolean(),
    followers_count: count,
    following_count: count,
    posts_count: count,
    active_stories_count: count.describe('Unexpired stories'),
    is_following: z.boolean().describe('Whether the caller follows this user'),
    is_private: z.boolean().describe('A private account: following it is a request its owner approves, and only approved followers see its posts, stories and follow lists'),
    follow_requested: z.boolean().describe('Whether the caller has asked to follow this private account and awaits approval'),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'UserProfile', description: "A user's profile with live counts" })

export const userSummary = z
  .strictObject({
    id: rowId,
    username: z.string(),
    full_name: z.string(),
    avatar: mediaPath('The avatar'),
    avatar_alt: z.string().describe('The avatar described for screen readers; "" when none'),
    is_verified: z.boolean(),
    is_following: z.boolean().describe('Whether the caller follows this user'),
    is_private: z.boolean().describe('A private account (its posts are for approved followers)'),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'UserSummary', description: 'A user in a list (followers, following, blocked, muted, search)' })

export const userPage = z.strictObject({ users: z.array(userSummary), ...paging }).meta({ id: 'UserPage', description: 'A page of users' })

export const blockState = z
  .strictObject({ user_id: rowId, is_blocked: z.boolean() })
  .meta({ id: 'BlockState', description: 'Whether the caller now blocks the user' })

export const muteState = z.strictObject({ user_id: rowId, is_muted: z.boolean() }).meta({ id: 'MuteState', description: 'Whether the caller now mutes the user' })

export const followRequestResult = z
  .strictObject({ user_id: rowId.describe('Who asked'), state: z.enum(['approved', 'denied']) })
  .meta({ id: 'FollowRequestResult', description: 'A follow request the caller approved (the requester now follows them) or denied' })

// Posts, likes and comments

const mention = z
  .strictObject({
    user_id: rowId,
    username: z.string(),
    start: count.describe('Index of the `@` in the text, in UTF-16 code units (as JavaScript, Java and NSString count)'),
    end: count.describe('Index just past the name'),
  })
  .meta({ id: 'Mention', description: 'An account the text names with `@username`, resolved when the text was written' })

const mentions = z.array(mention).describe('The accounts the text names (`@username`), in order; [] when none')

const postMediaItem = z
  .strictObject({
    path: z.string().describe('The upload, under `uploads/posts/`'),
    alt: z.string().describe('Its description for screen readers; "" when none'),
    type: z.enum(['image', 'video']).nullable().describe('What the upload is; null when unrecorded'),
    width: z.number().int().positive().nullable().describe('In pixels (a video as shown); null when unrecorded'),
    height: z.number().int().positive().nullable(),
    blurhash: z.string().nullable().describe("A BlurHash of the image (a video's poster frame)"),
    poster_url: z.string().nullable().describe("A video's poster frame (a path under `uploads/`); null for an image"),
  })
  .meta({ id: 'PostMedia', description: 'One image or video of a post, with what an app needs to lay it out and describe it' })

export const post = z
  .strictObject({
    id: rowId,
    content: z.string().describe('May hold #hashtags'),
    image: mediaPath("The image: the first media item's path"),
    media: z.array(postMediaItem).describe('Its images and videos in order, up to 10 ([] for none; a post with only `image` has it as the one item)'),
    is_public: z.boolean(),
    likes_count: count,
    comments_count: count,
    user_liked: z.boolean().describe('Whether the caller liked it'),
    bookmarked: z.boolean().describe('Whether the caller saved it (GET /posts/bookmarks)'),
    created_at: dateTime,
    edited_at: dateTime.nullable().describe('When the author last edited the post; null when never'),
    mentions,
    user_id: rowId.describe("The author's id"),
    username: z.string(),
    full_name: z.string(),
    avatar: mediaPath("The author's avatar"),
    is_verified: z.boolean(),
    ...imageMeta('image'),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'Post', description: 'A post with its author and counts' })

export const postPage = z.strictObject({ posts: z.array(post), ...paging }).meta({ id: 'PostPage', description: 'A page of posts, newest or most popular first' })

export const hashtagPage = z
  .strictObject({
    tag: z.string().describe('Lower-case, without #'),
    posts_count: count.describe('Public posts of public accounts using it'),
    posts: z.array(post).describe('Its public posts the caller may see, newest first'),
    ...paging,
  })
  .meta({ id: 'HashtagPage', description: "A hashtag's page of posts" })

export const comment = z
  .strictObject({
    id: rowId,
    content: z.string(),
    image: mediaPath('The image'),
    created_at: dateTime,
    mentions,
    parent_id: rowId.nullable().describe('The top-level comment this one replies to; null for a top-level comment'),
    replies_count: count.describe('How many replies a top-level comment has (0 for a reply)'),
    user_id: rowId.describe("The author's id"),
    username: z.string(),
    full_name: z.string(),
    avatar: mediaPath("The author's avatar"),
    is_verified: z.boolean(),
    ...imageMeta('image'),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'Comment', description: 'A comment with its author' })

export const commentThread = comment
  .extend({ replies: z.array(comment).describe('Its first replies, oldest first (GET /comments/{id}/replies pages them all)') })
  .meta({ id: 'CommentThread', description: 'A top-level comment with its first replies' })

export const postDetail = z
  .strictObject({ post, comments: z.array(commentThread).describe('A page of its top-level comments, oldest first, each with its first replies'), ...paging })
  .meta({ id: 'PostDetail', description: 'A post and a page of its comments' })

export const replyPage = z
  .strictObject({ replies: z.array(comment).describe('Replies to the comment, oldest first'), ...paging })
  .meta({ id: 'ReplyPage', description: "A page of a comment's replies" })

export const bookmarkState = z
  .strictObject({ post_id: rowId, bookmarked: z.boolean() })
  .meta({ id: 'BookmarkState', description: 'Whether the caller has the post saved, after saving or unsaving it' })

export const likeState = z
  .strictObject({ post_id: rowId, likes_count: count, user_liked: z.boolean() })
  .meta({ id: 'LikeState', description: 'The post after a like or unlike' })

// Stories

export const story = z
  .strictObject({
    id: rowId,
    content_type: z.enum(STORY_CONTENT_TYPES),
    media_url: mediaPath('The image or video'),
    media_alt: z.string().describe('`media_url` described for screen readers; "" for none (and for a text story)'),
    text_content: z.string().nullable(),
    mentions: z.array(mention).describe('The accounts `text_content` names (`@username`), in order; [] when none'),
    background_color: color,
    text_color: color,
    font_family: z.string(),
    font_size: z.number().int(),
    text_alignment: z.string(),
    duration: z.number().int().describe('Seconds to show it'),
    privacy_type: z.enum(STORY_PRIVACY_TYPES),
    views_count: count,
    created_at: dateTime,
    expires_at: dateTime,
    user_id: rowId,
    username: z.string(),
    full_name: z.string(),
    avatar: mediaPath("The author's avatar"),
    ...imageMeta('media'),
    poster_url: z.string().nullable().describe("A video's poster frame (a path under `uploads/`); null otherwise"),
    ...imageMeta('avatar'),
  })
  .meta({ id: 'Story', description: 'A story (it expires 24 hours after it was made)' })

export const storyFeedGroup = z
  .strictObject({
    user_id: rowId,
    username: z.string(),
    full_name: z.string(),
    avatar: mediaPath('The avatar'),
    is_verified: z.boolean(),
    story_count: count,
    story_ids: z.array(rowId).describe('In playing order, oldest first'),
    latest_story: dateTime,
    ...imageMeta('avatar'),
  })
  .meta({ id: 'StoryFeedGroup', description: "One user's active stories in the story feed" })

export const storyFeed = z.array(storyFeedGroup).describe("The caller's own stories first, then followed users' by latest story")

// Search

const hashtag = z
  .strictObject({ tag: z.string().describe('Lower-case, without #'), posts_count: count })
  .meta({ id: 'Hashtag', description: 'A hashtag and how many posts use it' })

const trendingHashtag = z
  .strictObject({
    tag: z.string().describe('Lower-case, without #'),
    posts_count: count,
    recent_authors: count.describe('Distinct accounts that used it in public posts of the last week (of the newest 5,000 such posts)'),
  })
  .meta({ id: 'TrendingHashtag', description: 'A hashtag used lately by many accounts' })

export const trending = z
  .strictObject({ hashtags: z.array(trendingHashtag).describe('Most trending first: recent distinct authors, the newer the more each counts') })
  .meta({ id: 'Trending', description: 'Hashtags trending now' })

export const userSearch = z.strictObject({ users: z.array(userSummary) }).meta({ id: 'UserSearch', description: 'Users matching the query' })
export const postSearch = z.strictObject({ posts: z.array(post) }).meta({ id: 'PostSearch', description: 'Public posts matching the query' })
export const hashtagSearch = z.strictObject({ hashtags: z.array(hashtag) }).meta({ id: 'HashtagSearch', description: 'Hashtags matching the query' })
export const searchResults = z
  .strictObject({ users: z.array(userSummary), posts: z.array(post), hashtags: z.array(hashtag) })
  .meta({ id: 'SearchResults', description: 'Users, posts and hashtags matching the query' })

// Notifications

export const notificationType = z
  .enum(['like', 'comment', 'follow', 'story_view', 'follow_request', 'mention', 'reply'])
  .describe(
    '`follow_request`: someone asks to follow the caller\'s private account; `mention`: someone named the caller (`@username`) in a post, comment or story; `reply`: someone replied to the caller\'s comment',
  )

export const notification = z
  .strictObject({
    id: rowId,
    type: notificationType,
    is_read: z.boolean(),
    created_at: dateTime,
    actor_id: rowId,
    actor_username: z.string(),
    actor_full_name: z.string(),
    actor_avatar: mediaPath("The actor's avatar"),
    actor_is_verified: z.boolean(),
    post_id: rowId.nullable().describe('The post liked, commented on, replied under or mentioned in; null for follows, follow requests and story events'),
    post_content: z.string().nullable().describe("The post's text (\"\" when it has none); null without a post"),
    post_image: z.string().nullable().describe("The post's image path (\"\" when it has none); null without a post"),
    story_id: rowId.nullable().describe('The story viewed or mentioned in; null for likes, comments, replies, follows and mentions in posts'),
    ...imageMeta('actor_avatar'),
    ...imageMeta('post_image'),
  })
  .meta({
    id: 'Notification',
    description:
      'Something that happened to the caller: a like, comment, reply, mention, follow, follow request or story view. Fields that do not apply are null (decisions §2): a follow has no post or story; an empty string is a post without text or image',
  })

export const notificationPage = z
  .strictObject({ notifications: z.array(notification), ...paging })
  .meta({ id: 'NotificationPage', description: 'A page of notifications, newest first' })

export const unreadCount = z.strictObject({ count }).meta({ id: 'UnreadCount', description: 'How many notifications are unread' })

export const markedRead = z
  .strictObject({ updated: count.describe('How many notifications changed from unread to read') })
  .meta({ id: 'MarkedRead', description: 'The result of marking notifications read' })

// Reports

export const report = z
  .strictObject({
    id: rowId,
    target_type: z.enum(REPORT_TARGET_TYPES),
    target_id: rowId,
    reason: z.string(),
    note: z.string(),
    status: z.enum(['open', 'resolved']),
    created_at: dateTime,
  })
  .meta({ id: 'Report', description: 'A report as its reporter sees it' })

export const reportCreated = z.strictObject({ report }).meta({ id: 'ReportCreated', description: 'The report just filed' })

// Uploads

export const uploadResult = z
  .strictObject({
    url: z.string().describe('Absolute address of the file'),
    path: z.string().describe('`uploads/...`: what the image, media_url and avatar fields take'),
    filename: z.string(),
    width: z.number().int().positive().describe("The stored image's pixels; for a video, its size as shown"),
    height: z.number().int().positive(),
    blurhash: z.string().describe("A BlurHash of the image; for a video, of its poster frame"),
    poster_url: z.string().optional().describe('Videos only: the absolute address of the first frame as a JPEG'),
    poster_path: z.string().optional().describe('Videos only: the poster frame as `uploads/...`'),
  })
  .meta({ id: 'UploadResult', description: 'Where an uploaded file is served, with what an app needs to lay it out' })
