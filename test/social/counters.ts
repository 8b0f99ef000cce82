/** Every counter shown on posts, profiles, stories, hashtags and the unread badge, recounted from the rows it counts. */
import type { TestServer } from '../helpers/server.js'
import { rawClient } from './helpers.js'

const RECOUNTS = {
  'posts.likes_count': 'select id, likes_count as stored, (select count(*) from likes l where l.post_id = posts.id) as actual from posts',
  'posts.comments_count': 'select id, comments_count as stored, (select count(*) from comments c where c.post_id = posts.id) as actual from posts',
  'comments.replies_count': 'select id, replies_count as stored, (select count(*) from comments r where r.post_id = comments.post_id and r.parent_id = comments.id) as actual from comments',
  // Not a count but an invariant: replies are one level deep, under a comment of the same post.
  'comments.parent_id (a reply to a reply, another post, or nothing)': `select id, 0 as stored,
    (select count(*) from comments r where r.parent_id = comments.id and r.post_id <> comments.post_id)
    + (case when parent_id is not null and (select p.parent_id is not null or p.id is null from comments p where p.id = comments.parent_id) is not 0 then 1 else 0 end) as actual from comments`,
  'users.posts_count': 'select id, posts_count as stored, (select count(*) from posts p where p.user_id = users.id) as actual from users',
  'users.followers_count': 'select id, followers_count as stored, (select count(*) from follows f where f.following_id = users.id) as actual from users',
  'users.following_count': 'select id, following_count as stored, (select count(*) from follows f where f.follower_id = users.id) as actual from users',
  'users.notifications_unread': `select id, notifications_unread as stored,
    (select count(*) from notifications n where n.user_id = users.id and n.is_read = 0) as actual from users`,
  // Not a count but an invariant: no unread notification at or below the user's read-up-to mark.
  'users.notifications_read_upto (unread at or below it)': `select id, 0 as stored,
    (select count(*) from notifications n where n.user_id = users.id and n.is_read = 0 and n.id <= users.notifications_read_upto) as actual from users`,
  'stories.views_count': 'select id, views_count as stored, (select count(*) from story_views v where v.story_id = stories.id) as actual from stories',
  'hashtags.posts_count': `select id, posts_count as stored,
    (select count(*) from post_hashtags ph join posts p on p.id = ph.post_id join users u on u.id = p.user_id
     where ph.hashtag_id = hashtags.id and p.is_public = 1 and u.is_private = 0) as actual from hashtags`,
}

/** Each counter whose stored value differs from its recount, as `column #id: stored != actual`; empty when all are exact. */
export async function counterDrift(server: TestServer): Promise<string[]> {
  const drift: string[] = []
  for (const [name, query] of Object.entries(RECOUNTS)) {
    const result = await rawClient(server).execute(`select * from (${query}) where stored <> actual`)
    for (const row of result.rows) drift.push(`${name} #${row.id}: ${row.stored} != ${row.actual}`)
  }
  return drift
}
