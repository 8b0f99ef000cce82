/** Row → API shape conversions shared by every router, so each field is formatted in one place. */
import { formatDateTime } from '../../shared/dates.js'
import type { SessionUser, UserProfile } from '../../shared/types.js'
import type { users } from '../db/schema.js'
import type { Notification, NotificationType, Story } from '../../shared/types.js'
import type { stories } from '../db/schema.js'
import { mediaOf, type Bare, type MediaMap } from './media.js'
import { toMentions } from './mentions.js'

type UserRow = typeof users.$inferSelect

export function toSessionUser(user: Pick<UserRow, 'id' | 'username' | 'email' | 'emailVerifiedAt' | 'fullName' | 'avatar'>): Bare<SessionUser> {
  return { id: user.id, username: user.username, email: user.email, email_verified: user.emailVerifiedAt !== null, full_name: user.fullName, avatar: user.avatar }
}

/** The user columns a profile shows. */
export type ProfileUser = Pick<UserRow, 'id' | 'username' | 'fullName' | 'bio' | 'avatar' | 'avatarAlt' | 'isVerified' | 'followersCount' | 'followingCount' | 'postsCount' | 'isPrivate'>

export function toProfile(user: ProfileUser, extra: { isFollowing: boolean; activeStories: number; followRequested: boolean }): Bare<UserProfile> {
  return {
    id: user.id,
    username: user.username,
    full_name: user.fullName,
    bio: user.bio,
    avatar: user.avatar,
    avatar_alt: user.avatarAlt,
    is_verified: user.isVerified,
    followers_count: user.followersCount,
    following_count: user.followingCount,
    posts_count: user.postsCount,
    active_stories_count: extra.activeStories,
    is_following: extra.isFollowing,
    is_private: user.isPrivate,
    follow_requested: extra.followRequested,
  }
}

export { formatDateTime }

type StoryRow = typeof stories.$inferSelect
type Author = Pick<UserRow, 'username' | 'fullName' | 'avatar'>

export function toStory(story: StoryRow, author: Author): Bare<Story> {
  return {
    id: story.id,
    content_type: story.contentType,
    media_url: story.mediaUrl,
    media_alt: story.mediaAlt,
    text_content: story.textContent,
    mentions: toMentions(story.mentions),
    background_color: story.backgroundColor,
    text_color: story.textColor,
    font_family: story.fontFamily,
    font_size: story.fontSize,
    text_alignment: story.textAlignment,
    duration: story.duration,
    privacy_type: story.privacyType,
    views_count: story.viewsCount,
    created_at: formatDateTime(story.createdAt),
    expires_at: formatDateTime(story.expiresAt),
    user_id: story.userId,
    username: author.username,
    full_name: author.fullName,
    avatar: author.avatar,
  }
}

/** One row of the notification list query: the notification, its actor, and its post when it has one. */
export interface NotificationRow {
  id: number
  type: NotificationType
  isRead: boolean
  createdAt: number
  actorId: number
  actorUsername: string
  actorFullName: string
  actorAvatar: string
  actorIsVerified: boolean
  postId: number | null
  postContent: string | null
  postImage: string | null
  storyId: number | null
}

/**
 * A notification as the API answers it, with the image metadata of `actor_avatar` and
 * `post_image` (media.ts), as one object literal in attachMedia's key order (see posts.ts
 * toPostWithMedia). A notification without a post (follow, story view) has null post fields
 * (decisions §2).
 */
export function toNotificationWithMedia(row: NotificationRow, media: MediaMap): Notification {
  const postImage = row.postId === null ? null : row.postImage
  const avatar = mediaOf(media, row.actorAvatar)
  const image = postImage === null ? undefined : mediaOf(media, postImage)
  return {
    id: row.id,
    type: row.type,
    is_read: row.isRead,
    created_at: formatDateTime(row.createdAt),
    actor_id: row.actorId,
    actor_username: row.actorUsername,
    actor_full_name: row.actorFullName,
    actor_avatar: row.actorAvatar,
    actor_avatar_width: avatar?.width ?? null,
    actor_avatar_height: avatar?.height ?? null,
    actor_avatar_blurhash: avatar?.blurhash ?? null,
    actor_is_verified: row.actorIsVerified,
    post_id: row.postId,
    post_content: row.postId === null ? null : row.postContent,
    post_image: postImage,
    post_image_width: image?.width ?? null,
    post_image_height: image?.height ?? null,
    post_image_blurhash: image?.blurhash ?? null,
    story_id: row.storyId,
  }
}
