/**
 * The data shapes of the social API (spec + decisions §2), inferred from their zod schemas in
 * schemas/responses.ts so the types and the published shapes cannot drift. Dates are
 * `YYYY-MM-DD HH:MM:SS` UTC strings.
 */
import type { z } from 'zod'
import type * as schemas from './schemas/responses.js'

/**
 * What an app needs to lay out the image of field `F` before it loads: `F_width`, `F_height` and
 * `F_blurhash`, recorded at upload; all null when the field is empty or the file predates them.
 */
export type ImageMeta<F extends string> = { [K in `${F}_width` | `${F}_height`]: number | null } & { [K in `${F}_blurhash`]: string | null }

/** A story's media: `media_*` as ImageMeta (a video's BlurHash is its poster's), and a video's poster frame path (else null). */
export type StoryMedia = ImageMeta<'media'> & { poster_url: string | null }

export type SessionUser = z.infer<typeof schemas.sessionUser>
export type Session = z.infer<typeof schemas.session>
/** One of the caller's live sessions (GET /auth/sessions); never its token or hash. */
export type SessionInfo = z.infer<typeof schemas.sessionInfo>
export type UserProfile = z.infer<typeof schemas.userProfile>
export type UserSummary = z.infer<typeof schemas.userSummary>
export type Post = z.infer<typeof schemas.post>
export type Comment = z.infer<typeof schemas.comment>
export type Mention = Post['mentions'][number]
/** One image or video of a post (its `media`). */
export type PostMedia = Post['media'][number]
/** A top-level comment with its first replies (post detail). */
export type CommentThread = z.infer<typeof schemas.commentThread>
export type Story = z.infer<typeof schemas.story>
export type StoryFeedGroup = z.infer<typeof schemas.storyFeedGroup>
export type NotificationType = z.infer<typeof schemas.notificationType>
export type Notification = z.infer<typeof schemas.notification>
export type Page = z.infer<typeof schemas.page>
export type UploadResult = z.infer<typeof schemas.uploadResult>
/** A user's report as its reporter sees it (POST /reports). */
export type Report = z.infer<typeof schemas.report>

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
