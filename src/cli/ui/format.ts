/**
 * What the CLI shows a person, as plain text (stdout is a pipe or a file). The ink components in
 * `views.tsx` render the same views with colour on a terminal; both read the helpers here.
 */
import { parseDateTime } from '../../shared/dates.js'
import type { Comment, CommentThread, Notification, Post, Story, StoryFeedGroup, UserProfile, UserSummary } from '../../shared/types.js'

export interface HashtagCount {
  tag: string
  posts_count: number
}

/** Everything the CLI renders for people; `--json` prints the data object instead. */
export type View =
  | { kind: 'profile'; profile: UserProfile }
  | { kind: 'post'; post: Post; comments?: Array<Comment | CommentThread> }
  | { kind: 'comments'; comments: Comment[]; page?: number; has_more?: boolean; empty: string }
  | { kind: 'posts'; posts: Post[]; page?: number; has_more?: boolean; empty: string }
  | { kind: 'users'; users: UserSummary[]; page?: number; has_more?: boolean; empty: string }
  | { kind: 'notifications'; notifications: Notification[]; page?: number; has_more?: boolean }
  | { kind: 'story'; story: Story }
  | { kind: 'storyFeed'; groups: StoryFeedGroup[] }
  | { kind: 'search'; users?: UserSummary[]; posts?: Post[]; hashtags?: HashtagCount[] }

/** "just now", "5m ago", "3h ago", "2d ago", then the date itself. */
export function timeAgo(dateTime: string, now: Date = new Date()): string {
  const then = parseDateTime(dateTime)
  if (Number.isNaN(then.getTime())) return dateTime
  const seconds = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000))
  if (seconds < 45) return 'just now'
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))}m ago`
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`
  if (seconds < 7 * 86_400) return `${Math.round(seconds / 86_400)}d ago`
  return dateTime.slice(0, 10)
}

/** Splits text into plain runs and hashtags (`#word`), so a renderer can highlight the tags. */
export function splitHashtags(text: string): Array<{ text: string; tag: boolean }> {
  const parts: Array<{ text: string; tag: boolean }> = []
  let last = 0
  for (const match of text.matchAll(/#[\p{L}\p{N}_]+/gu)) {
    if (match.index > last) parts.push({ text: text.slice(last, match.index), tag: false })
    parts.push({ text: match[0], tag: true })
    last = match.index + match[0].length
  }
  if (last < text.length) parts.push({ text: text.slice(last), tag: false })
  return parts
}

/** Hashtags are shown with their `#` whether or not the API includes it. */
export const hashtag = (tag: string) => `#${tag.replace(/^#/, '')}`

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export function displayName(user: { username: string; full_name?: string | null; is_verified?: boolean }): string {
  const name = user.full_name ? ` (${user.full_name})` : ''
  return `@${user.username}${user.is_verified ? ' ✓' : ''}${name}`
}

export const NOTIFICATION_TEXT: Record<Notification['type'], string> = {
  like: 'liked your post',
  comment: 'commented on your post',
  follow: 'started following you',
  story_view: 'viewed your story',
  follow_request: 'asked to follow you',
  mention: 'mentioned you',
  reply: 'replied to your comment',
}

export function pageHint(list: { page?: number; has_more?: boolean }): string | null {
  return list.has_more ? `more on page ${(list.page ?? 1) + 1} (--page ${(list.page ?? 1) + 1})` : null
}

function profileLines(p: UserProfile): string[] {
  return [
    `${displayName(p)} · id ${p.id}${p.is_private ? ' · private' : ''}${p.is_following ? ' · following' : p.follow_requested ? ' · requested' : ''}`,
    ...(p.bio ? [p.bio] : []),
    `${plural(p.posts_count, 'post')} · ${plural(p.followers_count, 'follower')} · ${p.following_count} following · ${plural(p.active_stories_count, 'active story', 'active stories')}`,
    ...(p.avatar ? [`avatar: ${p.avatar}`] : []),
  ]
}

/** Each image or video of a post with its alt text (a post of the spec's, with `image` only, as one). */
function mediaLines(p: Post): string[] {
  const items = p.media?.length ? p.media : p.image ? [{ path: p.image, alt: '', type: 'image' as const }] : []
  return items.map((item) => `  [${item.type ?? 'file'}] ${item.path}${item.alt ? ` (alt: ${item.alt})` : ''}`)
}

function postLines(p: Post, now: Date): string[] {
  return [
    `#${p.id} ${displayName(p)} · ${timeAgo(p.created_at, now)}${p.is_public === false ? ' · private' : ''}`,
    ...(p.content ? p.content.split('\n').map((line) => `  ${line}`) : []),
    ...mediaLines(p),
    `  ${plural(p.likes_count, 'like')}${p.user_liked ? ' (you liked)' : ''} · ${plural(p.comments_count, 'comment')}${p.bookmarked ? ' · saved' : ''}`,
  ]
}

/** A comment, and under a thread's head its first replies and how many more there are. */
function commentLines(c: Comment | CommentThread, now: Date, indent = '  '): string[] {
  const lines = [`${indent}${displayName(c)} · ${timeAgo(c.created_at, now)} · #${c.id}: ${c.content}${c.image ? ` [image] ${c.image}` : ''}`]
  const replies = 'replies' in c ? c.replies : []
  lines.push(...replies.flatMap((reply) => commentLines(reply, now, `${indent}  ↳ `)))
  const more = c.replies_count - replies.length
  if ('replies' in c && more > 0) lines.push(`${indent}  ↳ ${plural(more, 'more reply', 'more replies')}: plaza social replies ${c.id}`)
  return lines
}

function userLine(u: UserSummary): string {
  return `${displayName(u)} · id ${u.id}${u.is_private ? ' · private' : ''}${u.is_following ? ' · following' : ''}`
}

function notificationLine(n: Notification, now: Date): string {
  const subject = n.post_content ? `: "${n.post_content.length > 60 ? n.post_content.slice(0, 59) + '…' : n.post_content}"` : ''
  return `${n.is_read ? ' ' : '•'} ${n.id}  ${displayName({ username: n.actor_username, full_name: n.actor_full_name, is_verified: n.actor_is_verified })} ${NOTIFICATION_TEXT[n.type] ?? n.type}${subject} · ${timeAgo(n.created_at, now)}`
}

function storyLines(s: Story, now: Date): string[] {
  const body = s.content_type === 'text' ? s.text_content ?? '' : `[${s.content_type}] ${s.media_url}${s.media_alt ? ` (alt: ${s.media_alt})` : ''}`
  return [
    `story ${s.id} ${displayName(s)} · ${timeAgo(s.created_at, now)} · ${plural(s.views_count, 'view')} · ${s.privacy_type}`,
    `  ${body}`,
  ]
}

function storyGroupLine(g: StoryFeedGroup, now: Date): string {
  return `${displayName(g)} · ${plural(g.story_count, 'story', 'stories')} (ids ${g.story_ids.join(', ')}) · latest ${timeAgo(g.latest_story, now)}`
}

function withHint(lines: string[], list: { page?: number; has_more?: boolean }): string[] {
  const hint = pageHint(list)
  return hint ? [...lines, '', hint] : lines
}

/** The whole view as plain text, no colour. */
export function viewText(view: View, now: Date = new Date()): string {
  switch (view.kind) {
    case 'profile':
      return profileLines(view.profile).join('\n')
    case 'post': {
      const lines = postLines(view.post, now)
      if (view.comments) lines.push('', view.comments.length ? 'comments:' : 'no comments yet', ...view.comments.flatMap((c) => commentLines(c, now)))
      return lines.join('\n')
    }
    case 'posts':
      if (!view.posts.length) return view.empty
      return withHint(view.posts.flatMap((p, i) => [...(i ? [''] : []), ...postLines(p, now)]), view).join('\n')
    case 'comments':
      if (!view.comments.length) return view.empty
      return withHint(view.comments.flatMap((c) => commentLines(c, now)), view).join('\n')
    case 'users':
      if (!view.users.length) return view.empty
      return withHint(view.users.map(userLine), view).join('\n')
    case 'notifications':
      if (!view.notifications.length) return 'no notifications'
      return withHint(view.notifications.map((n) => notificationLine(n, now)), view).join('\n')
    case 'story':
      return storyLines(view.story, now).join('\n')
    case 'storyFeed':
      return view.groups.length ? view.groups.map((g) => storyGroupLine(g, now)).join('\n') : 'no stories from the people you follow'
    case 'search': {
      const sections: string[] = []
      if (view.users) sections.push(['users:', ...(view.users.length ? view.users.map((u) => `  ${userLine(u)}`) : ['  none'])].join('\n'))
      if (view.hashtags) sections.push(['hashtags:', ...(view.hashtags.length ? view.hashtags.map((h) => `  ${hashtag(h.tag)} · ${plural(h.posts_count, 'post')}`) : ['  none'])].join('\n'))
      if (view.posts) sections.push(['posts:', ...(view.posts.length ? view.posts.flatMap((p) => postLines(p, now).map((l) => `  ${l}`)) : ['  none'])].join('\n'))
      return sections.join('\n\n')
    }
  }
}
