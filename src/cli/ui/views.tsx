/**
 * Ink components for the terminal: the same views as `format.ts`, with the author, time ago and
 * counts laid out and hashtags highlighted. Loaded only when stdout is a TTY (see PlazaCommand.show).
 */
import { Box, Text } from 'ink'
import type { ReactNode } from 'react'
import type { Comment, CommentThread, Notification, Post, Story, StoryFeedGroup, UserProfile, UserSummary } from '../../shared/types.js'
import { hashtag, NOTIFICATION_TEXT, pageHint, plural, splitHashtags, timeAgo, type HashtagCount, type View } from './format.js'

function Author({ user }: { user: { username: string; full_name?: string | null; is_verified?: boolean } }) {
  return (
    <Text>
      <Text bold color="cyan">
        @{user.username}
      </Text>
      {user.is_verified ? <Text color="blue"> ✓</Text> : null}
      {user.full_name ? <Text dimColor> {user.full_name}</Text> : null}
    </Text>
  )
}

/** Post text with hashtags in colour. */
function RichText({ text }: { text: string }) {
  return (
    <Text>
      {splitHashtags(text).map((part, i) =>
        part.tag ? (
          <Text key={i} color="magenta" bold>
            {part.text}
          </Text>
        ) : (
          <Text key={i}>{part.text}</Text>
        ),
      )}
    </Text>
  )
}

function Ago({ at, now }: { at: string; now: Date }) {
  return <Text dimColor>{timeAgo(at, now)}</Text>
}

function ProfileCard({ profile }: { profile: UserProfile }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1}>
      <Text>
        <Author user={profile} />
        <Text dimColor> · id {profile.id}</Text>
        {profile.is_private ? <Text color="yellow"> · private</Text> : null}
        {profile.is_following ? <Text color="green"> · following</Text> : profile.follow_requested ? <Text color="yellow"> · requested</Text> : null}
      </Text>
      {profile.bio ? <RichText text={profile.bio} /> : null}
      <Text>
        <Text bold>{profile.posts_count}</Text> posts · <Text bold>{profile.followers_count}</Text> followers ·{' '}
        <Text bold>{profile.following_count}</Text> following · <Text bold>{profile.active_stories_count}</Text> active stories
      </Text>
      {profile.avatar ? <Text dimColor>avatar: {profile.avatar}</Text> : null}
    </Box>
  )
}

/** A comment; under a thread's head, its first replies and how many more there are. */
function CommentLine({ comment, now, reply = false }: { comment: Comment | CommentThread; now: Date; reply?: boolean }) {
  const replies = 'replies' in comment ? comment.replies : []
  const more = comment.replies_count - replies.length
  return (
    <Box flexDirection="column" marginLeft={reply ? 2 : 0}>
      <Text>
        {reply ? <Text dimColor>↳ </Text> : null}
        <Author user={comment} />
        <Text dimColor> · {timeAgo(comment.created_at, now)} · #{comment.id}: </Text>
        <RichText text={comment.content} />
        {comment.image ? <Text color="blue"> ▣ {comment.image}</Text> : null}
      </Text>
      {replies.map((r) => (
        <CommentLine key={r.id} comment={r} now={now} reply />
      ))}
      {'replies' in comment && more > 0 ? <Text dimColor>  ↳ {more} more {more === 1 ? 'reply' : 'replies'}: plaza social replies {comment.id}</Text> : null}
    </Box>
  )
}

function PostCard({ post, now, comments }: { post: Post; now: Date; comments?: Array<Comment | CommentThread> }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
      <Text>
        <Author user={post} />
        <Text dimColor> · </Text>
        <Ago at={post.created_at} now={now} />
        <Text dimColor> · #{post.id}</Text>
        {post.is_public === false ? <Text color="yellow"> · private</Text> : null}
      </Text>
      {post.content ? <RichText text={post.content} /> : null}
      {(post.media?.length ? post.media : post.image ? [{ path: post.image, alt: '', type: 'image' as const }] : []).map((item) => (
        <Text key={item.path} color="blue">
          {item.type === 'video' ? '▶' : '▣'} {item.path}
          {item.alt ? <Text dimColor> — {item.alt}</Text> : null}
        </Text>
      ))}
      <Text>
        <Text color={post.user_liked ? 'red' : undefined}>{post.user_liked ? '♥' : '♡'}</Text> {post.likes_count} · 💬 {post.comments_count}
        {post.bookmarked ? <Text color="yellow"> · saved</Text> : null}
      </Text>
      {comments ? (
        <Box flexDirection="column" marginTop={1}>
          {comments.length ? null : <Text dimColor>no comments yet</Text>}
          {comments.map((c) => (
            <CommentLine key={c.id} comment={c} now={now} />
          ))}
        </Box>
      ) : null}
    </Box>
  )
}

function More({ list }: { list: { page?: number; has_more?: boolean } }) {
  const hint = pageHint(list)
  return hint ? <Text dimColor>{hint}</Text> : null
}

function UserRow({ user }: { user: UserSummary }) {
  return (
    <Text>
      <Author user={user} />
      <Text dimColor> · id {user.id}</Text>
      {user.is_private ? <Text color="yellow"> · private</Text> : null}
      {user.is_following ? <Text color="green"> · following</Text> : null}
    </Text>
  )
}

function NotificationRow({ n, now }: { n: Notification; now: Date }) {
  return (
    <Text>
      <Text color={n.is_read ? undefined : 'yellow'}>{n.is_read ? '  ' : '● '}</Text>
      <Text dimColor>{n.id} </Text>
      <Author user={{ username: n.actor_username, full_name: n.actor_full_name, is_verified: n.actor_is_verified }} />{' '}
      {NOTIFICATION_TEXT[n.type] ?? n.type}
      {n.post_content ? <Text dimColor> “{n.post_content.length > 60 ? n.post_content.slice(0, 59) + '…' : n.post_content}”</Text> : null}
      <Text dimColor> · </Text>
      <Ago at={n.created_at} now={now} />
    </Text>
  )
}

function StoryCard({ story, now }: { story: Story; now: Date }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="magenta" paddingX={1}>
      <Text>
        <Author user={story} />
        <Text dimColor> · </Text>
        <Ago at={story.created_at} now={now} />
        <Text dimColor>
          {' '}
          · story {story.id} · {plural(story.views_count, 'view')} · {story.privacy_type}
        </Text>
      </Text>
      {story.content_type === 'text' ? (
        <RichText text={story.text_content ?? ''} />
      ) : (
        <Text color="blue">
          ▣ {story.content_type} {story.media_url}
          {story.media_alt ? ` (alt: ${story.media_alt})` : ''}
        </Text>
      )}
    </Box>
  )
}

function StoryGroupRow({ group, now }: { group: StoryFeedGroup; now: Date }) {
  return (
    <Text>
      <Author user={group} />
      <Text> · {plural(group.story_count, 'story', 'stories')}</Text>
      <Text dimColor> (ids {group.story_ids.join(', ')}) · latest </Text>
      <Ago at={group.latest_story} now={now} />
    </Text>
  )
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Box flexDirection="column" marginBottom={1}>
      <Text bold underline>
        {title}
      </Text>
      {children}
    </Box>
  )
}

function Hashtags({ hashtags }: { hashtags: HashtagCount[] }) {
  return (
    <>
      {hashtags.map((h) => (
        <Text key={h.tag}>
          <Text color="magenta" bold>
            {hashtag(h.tag)}
          </Text>
          <Text dimColor> · {plural(h.posts_count, 'post')}</Text>
        </Text>
      ))}
    </>
  )
}

/** The ink element for a view. */
export function ViewElement({ view, now = new Date() }: { view: View; now?: Date }) {
  switch (view.kind) {
    case 'profile':
      return <ProfileCard profile={view.profile} />
    case 'post':
      return <PostCard post={view.post} comments={view.comments} now={now} />
    case 'posts':
      return view.posts.length ? (
        <Box flexDirection="column">
          {view.posts.map((p) => (
            <PostCard key={p.id} post={p} now={now} />
          ))}
          <More list={view} />
        </Box>
      ) : (
        <Text dimColor>{view.empty}</Text>
      )
    case 'comments':
      return view.comments.length ? (
        <Box flexDirection="column">
          {view.comments.map((c) => (
            <CommentLine key={c.id} comment={c} now={now} />
          ))}
          <More list={view} />
        </Box>
      ) : (
        <Text dimColor>{view.empty}</Text>
      )
    case 'users':
      return view.users.length ? (
        <Box flexDirection="column">
          {view.users.map((u) => (
            <UserRow key={u.id} user={u} />
          ))}
          <More list={view} />
        </Box>
      ) : (
        <Text dimColor>{view.empty}</Text>
      )
    case 'notifications':
      return view.notifications.length ? (
        <Box flexDirection="column">
          {view.notifications.map((n) => (
            <NotificationRow key={n.id} n={n} now={now} />
          ))}
          <More list={view} />
        </Box>
      ) : (
        <Text dimColor>no notifications</Text>
      )
    case 'story':
      return <StoryCard story={view.story} now={now} />
    case 'storyFeed':
      return view.groups.length ? (
        <Box flexDirection="column">
          {view.groups.map((g) => (
            <StoryGroupRow key={g.user_id} group={g} now={now} />
          ))}
        </Box>
      ) : (
        <Text dimColor>no stories from the people you follow</Text>
      )
    case 'search':
      return (
        <Box flexDirection="column">
          {view.users ? (
            <Section title="users">{view.users.length ? view.users.map((u) => <UserRow key={u.id} user={u} />) : <Text dimColor>none</Text>}</Section>
          ) : null}
          {view.hashtags ? <Section title="hashtags">{view.hashtags.length ? <Hashtags hashtags={view.hashtags} /> : <Text dimColor>none</Text>}</Section> : null}
          {view.posts ? (
            <Section title="posts">{view.posts.length ? view.posts.map((p) => <PostCard key={p.id} post={p} now={now} />) : <Text dimColor>none</Text>}</Section>
          ) : null}
        </Box>
      )
  }
}
