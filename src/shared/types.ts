/** The data shapes of the social API (spec + decisions §2). Dates are `YYYY-MM-DD HH:MM:SS` UTC strings. */

/**
 * What an app needs to lay out the image of field `F` before it loads: `F_width`, `F_height` and
 * `F_blurhash`, recorded at upload; all null when the field is empty or the file predates them.
 */
export type ImageMeta<F extends string> = { [K in `${F}_width` | `${F}_height`]: number | null } & { [K in `${F}_blurhash`]: string | null }

/** A story's media: `media_*` as ImageMeta (a video's BlurHash is its poster's), and a video's poster frame path (else null). */
export type StoryMedia = ImageMeta<'media'> & { poster_url: string | null }

export interface SessionUser extends ImageMeta<'avatar'> {
  id: number
  username: string
  email: string
  full_name: string
  avatar: string
}

export interface Session {
  token: string
  expires_at: string
  user: SessionUser
}

/** One of the caller's live sessions (GET /auth/sessions); never its token or hash. */
export interface SessionInfo {
  id: number
  user_agent: string
  created_at: string
  /** When its token was last presented, to about a minute. */
  last_used_at: string | null
  /** The session making this request. */
  current: boolean
}

export interface UserProfile extends ImageMeta<'avatar'> {
  id: number
  username: string
  full_name: string
  bio: string
  avatar: string
  is_verified: boolean
  followers_count: number
  following_count: number
  posts_count: number
  active_stories_count: number
  is_following: boolean
}

export interface UserSummary extends ImageMeta<'avatar'> {
  id: number
  username: string
  full_name: string
  avatar: string
  is_verified: boolean
  is_following: boolean
}

export interface Post extends ImageMeta<'image'>, ImageMeta<'avatar'> {
  id: number
  content: string
  image: string
  is_public: boolean
  likes_count: number
  comments_count: number
  user_liked: boolean
  created_at: string
  /** When the author last edited the post; null when never. */
  edited_at: string | null
  user_id: number
  username: string
  full_name: string
  avatar: string
  is_verified: boolean
}

export interface Comment extends ImageMeta<'image'>, ImageMeta<'avatar'> {
  id: number
  content: string
  image: string
  created_at: string
  user_id: number
  username: string
  full_name: string
  avatar: string
  is_verified: boolean
}

export interface Story extends StoryMedia, ImageMeta<'avatar'> {
  id: number
  content_type: 'text' | 'image' | 'video'
  media_url: string
  text_content: string | null
  background_color: string
  text_color: string
  font_family: string
  font_size: number
  text_alignment: string
  duration: number
  privacy_type: 'followers' | 'public'
  views_count: number
  created_at: string
  expires_at: string
  user_id: number
  username: string
  full_name: string
  avatar: string
}

export interface StoryFeedGroup extends ImageMeta<'avatar'> {
  user_id: number
  username: string
  full_name: string
  avatar: string
  is_verified: boolean
  story_count: number
  story_ids: number[]
  latest_story: string
}

export type NotificationType = 'like' | 'comment' | 'follow' | 'story_view'

export interface Notification extends ImageMeta<'actor_avatar'>, ImageMeta<'post_image'> {
  id: number
  type: NotificationType
  is_read: boolean
  created_at: string
  actor_id: number
  actor_username: string
  actor_full_name: string
  actor_avatar: string
  actor_is_verified: boolean
  post_id: number | null
  post_content: string | null
  post_image: string | null
  story_id: number | null
}

export interface Page {
  page: number
  has_more: boolean
}

export interface UploadResult {
  url: string
  path: string
  filename: string
  /** The stored image's pixels; for a video, its size as shown (rotation applied). */
  width: number
  height: number
  /** A BlurHash of the stored image; for a video, of its poster frame. */
  blurhash: string
  /** Videos only: the first frame as a JPEG, recorded as its own upload next to the video. */
  poster_url?: string
  poster_path?: string
}

/** A user's report as its reporter sees it (POST /reports). */
export interface Report {
  id: number
  target_type: 'post' | 'comment' | 'story' | 'user'
  target_id: number
  reason: string
  note: string
  status: 'open' | 'resolved'
  created_at: string
}

/** A report as the operator lists it (`plaza admin reports`). */
export interface ReportEntry {
  id: number
  target_type: 'post' | 'comment' | 'story' | 'user'
  target_id: number
  /** Whom the report is about: the content's author, or the reported user. */
  target_user_id: number
  target_username: string
  /** The start of the reported text (`@username` for a user); null once the content is gone. */
  excerpt: string | null
  reporter_id: number
  reporter_username: string
  reason: string
  note: string
  status: 'open' | 'resolved'
  resolution: 'dismiss' | 'remove' | 'suspend' | null
  created_at: string
  resolved_at: string | null
}

/** One row of the moderation record (`plaza admin actions`). */
export interface ModerationAction {
  id: number
  moderator: string
  action: 'dismiss' | 'remove' | 'suspend' | 'unsuspend'
  report_id: number | null
  target_type: 'post' | 'comment' | 'story' | 'user'
  target_id: number
  /** The user's name when the target is a user (and still exists). */
  target_username: string | null
  note: string
  created_at: string
}
