import { and, asc, desc, gt, gte, lt, sql, type SQL } from 'drizzle-orm'
import type { ReadDb, Tx } from '../db/client.js'
import { hashtags, postHashtags } from '../db/schema.js'

/**
 * A hashtag is `#` followed by letters, digits or `_` (any script), not glued to a preceding word
 * (`a#b` is no tag), at most 100 characters. Tags are stored lower-cased, without the `#`.
 */
const HASHTAG = /(?<![\p{L}\p{N}_&#])#([\p{L}\p{N}_]{1,100})/gu

/** The distinct, lower-cased tags of a text, in order of first appearance. */
export function extractHashtags(text: string): string[] {
  const tags = new Set<string>()
  for (const match of text.matchAll(HASHTAG)) tags.add(match[1].toLowerCase())
  return [...tags]
}

/**
 * Links a new post to its tags. `posts_count` counts public posts only, so a tag used only in
 * non-public posts never shows in hashtag search (its text would leak otherwise). Two raw
 * statements over the tags as one JSON array, whatever their number (this runs under the write lock).
 */
export async function attachHashtags(tx: Tx, postId: number, tags: string[], isPublic: boolean): Promise<void> {
  if (tags.length === 0) return
  const increment = isPublic ? 1 : 0
  const list = JSON.stringify(tags)
  await tx.run(sql`
    insert into ${hashtags} (tag, posts_count) select value, ${increment} from json_each(${list}) where true
    on conflict (tag) do update set posts_count = posts_count + excluded.posts_count`)
  await tx.run(sql`
    insert into ${postHashtags} (post_id, hashtag_id)
    select ${postId}, id from ${hashtags} where tag in (select value from json_each(${list}))
    on conflict do nothing`)
}

/**
 * Lowers `hashtags.posts_count` for the public posts of `postIds` (a subquery of ids) among their
 * tags, unlinks them, and drops tags no post uses any more. Runs before the posts are deleted
 * or edited (while `is_public` is still the one the counts were made with).
 */
export async function detachHashtags(tx: Tx, postIds: SQL): Promise<void> {
  const tagIds = (await tx.values<[number]>(sql`select distinct hashtag_id from post_hashtags where post_id in (${postIds})`)).map((row) => row[0])
  if (tagIds.length === 0) return
  const tags = JSON.stringify(tagIds)
  await tx.run(sql`
    update hashtags set posts_count = posts_count - (
      select count(*) from post_hashtags ph join posts p on p.id = ph.post_id
      where ph.hashtag_id = hashtags.id and p.is_public = 1 and p.id in (${postIds}))
    where id in (select value from json_each(${tags}))`)
  await tx.run(sql`delete from post_hashtags where post_id in (${postIds})`)
  await tx.run(sql`
    delete from hashtags where id in (select value from json_each(${tags}))
      and not exists (select 1 from post_hashtags where hashtag_id = hashtags.id)`)
}

/** The upper bound of a prefix range: every string starting with `prefix` sorts below it. */
export function prefixEnd(prefix: string): string {
  return prefix + '\u{10FFFF}'
}

/** Tags starting with `q` (the `#` optional), most used first; a range scan of `hashtags_tag_idx`. */
export function hashtagSearchQuery(db: ReadDb, q: string, limit: number) {
  const prefix = q.replace(/^#+/, '').toLowerCase()
  return db
    .select({ tag: hashtags.tag, posts_count: hashtags.postsCount })
    .from(hashtags)
    .where(and(gte(hashtags.tag, prefix), lt(hashtags.tag, prefixEnd(prefix)), gt(hashtags.postsCount, 0)))
    .orderBy(desc(hashtags.postsCount), asc(hashtags.tag))
    .limit(limit)
}
