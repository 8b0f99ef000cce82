/** Row → API shape conversions shared by every router, so each field is formatted in one place. */
import { formatDateTime } from '../../shared/dates.js'
import type { SessionUser, UserProfile } from '../../shared/types.js'
import type { users } from '../db/schema.js'

type UserRow = typeof users.$inferSelect

export function toSessionUser(user: UserRow): SessionUser {
  return { id: user.id, username: user.username, email: user.email, full_name: user.fullName, avatar: user.avatar }
}

export function toProfile(user: UserRow, extra: { isFollowing: boolean; activeStories: number }): UserProfile {
  return {
    id: user.id,
    username: user.username,
    full_name: user.fullName,
    bio: user.bio,
    avatar: user.avatar,
    is_verified: user.isVerified,
    followers_count: user.followersCount,
    following_count: user.followingCount,
    posts_count: user.postsCount,
    active_stories_count: extra.activeStories,
    is_following: extra.isFollowing,
  }
}

export { formatDateTime }
