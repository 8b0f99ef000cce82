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
 * A post counts toward its tags' `posts_count` when anyone may see it: it is public and its author
 * is not a private account. A tag used only where not everyone may look never shows in hashtag
 * search or trends (its text would leak otherwise). As a condition on posts joined as `p`.
 */
export const listedPost = sql`(p.is_public = 1 and not exists (select 1 from users lu where lu.id = p.user_id and lu.is_private = 1))`

/**
 * Links a new post to its tags; `listed` says whether it counts toward their `posts_count`
 * (listedPost: public, by an account that is not private). Two raw statements over the tags as one
 * JSON array, whatever their number (this runs under the write lock).
 */
export async function attachHashtags(tx: Tx, postId: number, tags: string[], listed: boolean): Promise<void> {
  if (tags.length === 0) return
  const increment = listed ? 1 : 0
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
 * Lowers `hashtags.posts_count` for the listed posts of `postIds` (a subquery of ids; listedPost)
 * among their tags, unlinks them, and drops tags no post uses any more. Runs before the posts are
 * deleted or edited (while `is_public` is still the one the counts were made with).
 */
export async function detachHashtags(tx: Tx, postIds: SQL): Promise<void> {
  const tagIds = (await tx.values<[number]>(sql`select distinct hashtag_id from post_hashtags where post_id in (${postIds})`)).map((row) => row[0])
  if (tagIds.length === 0) return
  const tags = JSON.stringify(tagIds)
  await tx.run(sql`
    update hashtags set posts_count = posts_count - (
      select count(*) from post_hashtags ph join posts p on p.id = ph.post_id
      where ph.hashtag_id = hashtags.id and ${listedPost} and p.id in (${postIds}))
    where id in (select value from json_each(${tags}))`)
  await tx.run(sql`delete from post_hashtags where post_id in (${postIds})`)
  await tx.run(sql`
    delete from hashtags where id in (select value from json_each(${tags}))
      and not exists (select 1 from post_hashtags where hashtag_id = hashtags.id)`)
}

/**
 * Moves the counts of the tags of `authorId`'s public posts by `delta` each (the account turned
 * private, -1, or public, 1), in the caller's transaction: the author's posts are a range of
 * posts_user_created_idx, their tags the post_hashtags key, and each tag's count moves once.
 */
export async function recountAuthorTags(tx: Tx, authorId: number, delta: 1 | -1): Promise<void> {
  await tx.run(sql`
    update hashtags set posts_count = posts_count + ${delta} * c.n
    from (select ph.hashtag_id as id, count(*) as n from posts p join post_hashtags ph on ph.post_id = p.id
          where p.user_id = ${authorId} and p.is_public = 1 group by ph.hashtag_id) c
    where hashtags.id = c.id`)
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
