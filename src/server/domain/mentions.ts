/**
 * Mentions: `@username` in a post, a comment or a story's text. Each is resolved once, when the text
 * is written (as Mastodon does), to the account it names, and kept with the item as a small JSON
 * array, so that every answer carries `mentions: [{user_id, username, start, end}]` without a query
 * of its own. The first MENTION_NOTIFY_LIMIT accounts a text names are told (`mention`), each only
 * if it may see the item, neither side blocked the other, and it has not muted the author.
 */
import { sql, type SQL } from 'drizzle-orm'
import type { Mention } from '../../shared/types.js'
import type { ReadDb, Tx } from '../db/client.js'
import { prepared } from '../db/prepared.js'
import { posts, stories, users } from '../db/schema.js'
import { unblocked } from './relations.js'

/**
 * `@` and a username (USERNAME_PATTERN: 3 to 30 letters, digits, `_` or `.`), not glued to a word
 * before it (`ann@example.com` names nobody) nor running on into more name characters. A trailing
 * `.` ends a sentence, not the name (trimmed below).
 */
const MENTION = /(?<![\p{L}\p{N}_.@/&#])@([A-Za-z0-9_.]{3,30})(?![A-Za-z0-9_])/gu

/** How many distinct accounts a text's mentions may link. */
export const MENTION_LINK_LIMIT = 20

/** How many of the accounts a text names are notified, at most (the first ones, in the text's order). */
export const MENTION_NOTIFY_LIMIT = 10

/** A name as written, where it stands: `start` is the `@`'s index, `end` the index after the name (UTF-16 code units, as JavaScript strings count). */
export interface MentionAt {
  name: string
  start: number
  end: number
}

/** Every `@name` of a text, in order (names of fewer than 3 characters once trailing dots go are none). */
export function extractMentions(text: string): MentionAt[] {
  if (!text.includes('@')) return []
  const found: MentionAt[] = []
  for (const match of text.matchAll(MENTION)) {
    const name = match[1].replace(/\.+$/, '')
    if (name.length >= 3) found.push({ name, start: match.index, end: match.index + 1 + name.length })
  }
  return found
}

/** A resolved mention as stored: `[user_id, username, start, end]`. */
export type StoredMention = [number, string, number, number]

const usersNamed = prepared((db) =>
  db
    .select({ id: users.id, username: users.username })
    .from(users)
    .where(sql`lower(${users.username}) in (select value from json_each(${sql.placeholder('names')})) and ${users.suspendedAt} is null`)
    .prepare(),
)

/**
 * The mentions of `text` that name an account (not a suspended one), the first MENTION_LINK_LIMIT
 * distinct names only, in the text's order. Read on `reads` before the item's write transaction
 * (users_username_lower_idx): usernames never change, so nothing the transaction does can make it
 * wrong; an account deleted meanwhile is skipped by the notification's insert. No query for a text
 * without `@`.
 */
export async function resolveMentions(reads: ReadDb, text: string): Promise<StoredMention[]> {
  const found = extractMentions(text)
  if (found.length === 0) return []
  const names = [...new Set(found.map((m) => m.name.toLowerCase()))].slice(0, MENTION_LINK_LIMIT)
  const rows = await usersNamed(reads).all({ names: JSON.stringify(names) })
  const byName = new Map(rows.map((row) => [row.username.toLowerCase(), row]))
  return found.flatMap((m) => {
    const user = byName.get(m.name.toLowerCase())
    return user ? [[user.id, user.username, m.start, m.end] satisfies StoredMention] : []
  })
}

/** The mentions column's value: null for none (most texts), so an item without any stores nothing. */
export function mentionsColumn(mentions: readonly StoredMention[]): string | null {
  return mentions.length === 0 ? null : JSON.stringify(mentions)
}

/** The `mentions` of an answer, from the column. */
export function toMentions(column: string | null): Mention[] {
  if (column === null) return []
  return (JSON.parse(column) as StoredMention[]).map(([user_id, username, start, end]) => ({ user_id, username, start, end }))
}

/** The accounts a text's mentions name, each once, in order. */
export function mentionedIds(mentions: readonly StoredMention[]): number[] {
  return [...new Set(mentions.map((m) => m[0]))]
}

/** What a mention is made in, for the notification (which names the post or the story) and its visibility test. */
export type MentionedIn = { post: number } | { story: number; now: number }

/**
 * Tells the first MENTION_NOTIFY_LIMIT accounts of `userIds` (the mentioned, in order) that
 * `actorId` named them in a post (or a comment under it) or a story, in the caller's transaction:
 * one statement whatever their number. Skipped: the actor, the accounts of `skip` (told otherwise
 * about the same item: a reply, a comment), a suspended account, one blocked either way, one that
 * muted the actor, and one that may not see the item (posts.ts visibility for a post or a comment
 * under it, stories.ts for a story, both given as `visible`).
 */
export async function notifyMentions(
  tx: Tx,
  actorId: number,
  userIds: readonly number[],
  where: MentionedIn,
  visible: (viewer: SQL) => SQL,
  now: Date,
  skip: readonly number[] = [],
): Promise<void> {
  const candidates = userIds.filter((id) => id !== actorId).slice(0, MENTION_NOTIFY_LIMIT).filter((id) => !skip.includes(id))
  if (candidates.length === 0) return
  const viewer = sql`u.id`
  const post = 'post' in where ? where.post : null
  const story = 'story' in where ? where.story : null
  const item = 'post' in where ? sql`exists (select 1 from ${posts} where ${posts.id} = ${post} and ${visible(viewer)})` : sql`exists (select 1 from ${stories} where ${stories.id} = ${story} and ${visible(viewer)})`
  await tx.run(sql`
    insert into notifications (user_id, actor_id, type, post_id, story_id, created_at)
    select u.id, ${actorId}, 'mention', ${post}, ${story}, ${now.getTime()}
    from json_each(${JSON.stringify(candidates)}) j join ${users} u on u.id = j.value
    where u.suspended_at is null and ${unblocked(viewer, actorId)}
      and not exists (select 1 from mutes where muter_id = u.id and muted_id = ${actorId})
      and ${item}
    order by j.key`)
}
