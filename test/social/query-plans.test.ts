/**
 * Every list query is served by an index: EXPLAIN QUERY PLAN of each must name the index that
 * serves it and must not scan a whole table. The plans are printed in docs/social.md.
 */
import { is, Placeholder, type SQL } from 'drizzle-orm'
import { SQLiteAsyncDialect } from 'drizzle-orm/sqlite-core'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { exploreRankingQuery } from '../../src/server/domain/explore.js'
import { bookmarksQuery } from '../../src/server/domain/bookmarks.js'
import { followRequestsQuery } from '../../src/server/domain/follow-requests.js'
import { hashtagPostsQuery, trendingQuery } from '../../src/server/domain/hashtag-pages.js'
import { followersQuery, followingQuery } from '../../src/server/domain/follows.js'
import { hashtagSearchQuery } from '../../src/server/domain/hashtags.js'
import { postDetailQuery, repliesQuery } from '../../src/server/domain/comments.js'
import { byUserQuery, directFeedQuery, idInList, selectPosts, visiblePostQuery } from '../../src/server/domain/posts.js'
import { relationPageQuery } from '../../src/server/domain/relations.js'
import { postCandidatesQuery, postSearchIdsQuery, toFtsQuery, userSearchQuery } from '../../src/server/domain/search.js'
import { fanOutRecipients, pendingIdsQuery, pruneTimelineQuery, timelineIdsQuery } from '../../src/server/domain/timelines.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { followUser, post, rawClient } from './helpers.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
  // Some rows, but no ANALYZE: without statistics SQLite plans as for large tables, which is what
  // this test is about (with a handful of analysed rows a full scan is rightly the cheapest plan).
  const users = [await registerUser(server), await registerUser(server), await registerUser(server)]
  await followUser(server, users[0].token, users[1].id)
  for (const u of users) for (let i = 0; i < 5; i++) await post(server, u.token, { content: `hello #tag${i}` })
})
test.after(async () => {
  await server.close()
})

/** A raw SQL statement (the compound queries written with drizzle's `sql`) in the builders' shape. */
const dialect = new SQLiteAsyncDialect()
const raw = (statement: SQL) => ({ toSQL: () => dialect.sqlToQuery(statement) })

/** Values for the placeholders of prepared queries: a page of ids as a JSON array. */
const placeholderValues: Record<string, unknown> = { ids: '[1,2,3]' }

async function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string[]> {
  const { sql, params } = query.toSQL()
  const args = params.map((param) => (is(param, Placeholder) ? placeholderValues[param.name] : param))
  const result = await rawClient(server).execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: args as never })
  return result.rows.map((row) => String(row.detail))
}

/**
 * A full scan of a real table; scans of a constant row, a bounded subquery (search's `matches`
 * is LIMITed, and so is trends' window `r`) or an FTS MATCH are fine, and so is one of the pulled authors (`pa`): the accounts
 * over the fan-out threshold, a handful by construction, read whole by design; nor one of the
 * JSON array of a page's ids (`json_each`, or `j` where a query names it), nor one of the pending merge's authors (`a`: the
 * viewer's follows, an index range, and the viewer), nor one of the partial index of suspended
 * accounts (users_suspended_idx holds those only, read once per statement), nor one of a page of
 * ids sorted first (`page`: at most a page's rows).
 */
function fullScans(plan: string[]): string[] {
  return plan.filter(
    (line) =>
      /^SCAN /.test(line) &&
      !/^SCAN (CONSTANT ROW|\(subquery-\d+\)|matches$|r$|pa$|a$|page$|json_each VIRTUAL TABLE|j VIRTUAL TABLE|users USING (COVERING )?INDEX users_suspended_idx$)/.test(line) &&
      !/VIRTUAL TABLE INDEX \d+:M/.test(line),
  )
}

const paging = { page: 3, limit: 20 }
const cases: Array<[string, () => { toSQL(): { sql: string; params: unknown[] } }, string[]]> = [
  ['feed ids (timeline)', () => timelineIdsQuery(server.services.db, 1, 61), ['SEARCH timelines USING PRIMARY KEY (user_id=?)', 'SCAN pa', 'SEARCH f USING PRIMARY KEY (follower_id=? AND following_id=?)', 'SEARCH p2 USING COVERING INDEX posts_user_created_idx (user_id=? AND created_at>?)', 'SEARCH b USING PRIMARY KEY (follower_id=?)', 'SEARCH p3 USING COVERING INDEX posts_user_created_idx (user_id=? AND created_at>?)', 'SEARCH p USING COVERING INDEX posts_user_created_idx (user_id=? AND created_at>?)']],
  // Per followed account one range of posts_user_created_idx past the page bound: the cost follows the viewer's follows, not the backlog.
  ['feed ids (pending posts)', () => raw(pendingIdsQuery(1, 61)), ['SEARCH f USING PRIMARY KEY (follower_id=?)', 'SEARCH p USING COVERING INDEX posts_user_created_idx (user_id=? AND created_at>?)', 'SEARCH c USING INTEGER PRIMARY KEY']],
  ['feed (direct)', () => directFeedQuery(server.services.db, 1, paging), ['follows', 'posts_user_created_idx', 'likes']],
  ['feed and explore page rows', () => selectPosts(server.services.db, 1).where(idInList()), ['SEARCH posts USING INTEGER PRIMARY KEY', 'likes']],
  ['explore ranking', () => exploreRankingQuery(server.services.db, new Date()), ['posts_public_created_idx']],
  // Covering: the follower ids come from the index itself, not one follows-table lookup per follower.
  ['fan-out recipients (post create)', () => raw(fanOutRecipients(2, false)), ['SEARCH follows USING COVERING INDEX follows_following_created_idx (following_id=?)']],
  ['timeline prune (unfollow)', () => raw(pruneTimelineQuery(1, 2)), ['SEARCH timelines USING PRIMARY KEY', 'posts_user_created_idx']],
  ['posts by user', () => byUserQuery(server.services.db, 2, 1, paging), ['posts_user_created_idx']],
  // The post by its key; the page's range of (post_id, parent_id null), then per top-level comment with replies its range (post_id, parent_id) down to the preview's limit.
  ['post detail: the post, its comments and their first replies', () => postDetailQuery(server.services.db, 1, 2, paging.limit + 1, (paging.page - 1) * paging.limit), ['SEARCH posts USING INTEGER PRIMARY KEY (rowid=?)', 'SEARCH comments USING INDEX comments_post_parent_created_idx (post_id=? AND parent_id=?)', 'SEARCH r USING INDEX comments_post_parent_created_idx (post_id=? AND parent_id=?)']],
  ['replies of a comment', () => repliesQuery(server.services.db, 1, 1, 2, 21, 0), ['SEARCH comments USING INDEX comments_post_parent_created_idx (post_id=? AND parent_id=?)']],
  ['followers', () => followersQuery(server.services.db, 1, 2, paging), ['follows_following_created_idx']],
  ['following', () => followingQuery(server.services.db, 1, 2, paging), ['SEARCH follows USING PRIMARY KEY (follower_id=?)']],
  ['blocked list', () => relationPageQuery(server.services.db, 'blocked', 1, 21, 0), ['blocks_blocker_created_idx']],
  ['muted list', () => relationPageQuery(server.services.db, 'muted', 1, 21, 0), ['mutes_muter_created_idx']],
  ['follow requests', () => followRequestsQuery(server.services.db, 1, 21, 0), ['follow_requests_target_created_idx']],
  ['hashtag page', () => hashtagPostsQuery(server.services.db, 1, 2, 21, 0), ['SEARCH post_hashtags USING COVERING INDEX post_hashtags_hashtag_idx (hashtag_id=?)', 'SEARCH posts USING INTEGER PRIMARY KEY (rowid=?)']],
  // Once a minute per process: a range of the newest public posts, then each one's tags by the key.
  ['trending ranking', () => trendingQuery(server.services.db, new Date()), ['SEARCH p USING INDEX posts_public_created_idx (is_public=? AND created_at>?)', 'SEARCH ph USING COVERING INDEX sqlite_autoindex_post_hashtags_1 (post_id=?)']],
  ['bookmarks', () => bookmarksQuery(server.services.db, 1, 21, 0), ['SEARCH bookmarks USING COVERING INDEX bookmarks_user_created_idx (user_id=?)', 'SEARCH posts USING INTEGER PRIMARY KEY (rowid=?)']],
  ['search users', () => userSearchQuery(server.services.db, 'user', 1, 10), ['users_username_lower_idx', 'users_fts VIRTUAL TABLE']],
  ['search posts', () => postSearchIdsQuery(server.services.db, toFtsQuery('hello')!, 10), ['posts_fts VIRTUAL TABLE', 'SEARCH p USING INTEGER PRIMARY KEY']],
  // What is ranked (postSearchIds): the window, each row's post and docsize by primary key.
  ['search posts (the window, ranked in JS)', () => raw(postCandidatesQuery(toFtsQuery('hello')!, 1)), ['posts_fts VIRTUAL TABLE', 'SEARCH p USING INTEGER PRIMARY KEY', 'SEARCH d USING INTEGER PRIMARY KEY']],
  ['search hashtags', () => hashtagSearchQuery(server.services.db, 'tag', 10), ['hashtags_tag_idx']],
]

for (const [name, build, expected] of cases) {
  test(`${name} is served by an index`, async () => {
    const plan = await planOf(build())
    assert.equal(fullScans(plan), [], `${name}:\n${plan.join('\n')}`)
    for (const index of expected) assert.ok(plan.some((line) => line.includes(index)), `${name} should use ${index}:\n${plan.join('\n')}`)
  })
}

test('the followers, blocked, muted, follow-request, bookmark and hashtag lists need no extra sort (the index order is the answer order)', async () => {
  for (const query of [
    followersQuery(server.services.db, 1, 2, paging),
    relationPageQuery(server.services.db, 'blocked', 1, 21, 0),
    relationPageQuery(server.services.db, 'muted', 1, 21, 0),
    followRequestsQuery(server.services.db, 1, 21, 0),
    bookmarksQuery(server.services.db, 1, 21, 0),
    hashtagPostsQuery(server.services.db, 1, 2, 21, 0),
  ]) {
    const plan = await planOf(query)
    assert.not.ok(plan.some((line) => line.includes('TEMP B-TREE')), plan.join('\n'))
  }
})

test('whom a user follows is sorted ids first: the primary key range, then the users of the page only', async () => {
  const plan = await planOf(followingQuery(server.services.db, 1, 2, paging))
  const scan = plan.indexOf('SCAN page')
  assert.ok(scan > 0, plan.join('\n'))
  const [inner, outer] = [plan.slice(0, scan), plan.slice(scan)]
  assert.ok(inner.includes('SEARCH follows USING PRIMARY KEY (follower_id=?)'), plan.join('\n'))
  assert.ok(inner.some((line) => line.includes('TEMP B-TREE FOR ORDER BY')), plan.join('\n'))
  assert.ok(outer.includes('SEARCH users USING INTEGER PRIMARY KEY (rowid=?)'), plan.join('\n'))
})

test('the post lookup of detail, like and comment uses primary keys only', async () => {
  const plan = await planOf(visiblePostQuery(server.services.db, 1, 2))
  assert.equal(fullScans(plan), [], plan.join('\n'))
  assert.ok(plan.some((line) => line.includes('SEARCH posts USING INTEGER PRIMARY KEY')), plan.join('\n'))
})

test('every foreign key has an index led by its child column, so deleting a parent row never scans the child table', async () => {
  const raw = rawClient(server)
  const keys = await raw.execute(`select m.name as tbl, f."from" as col from sqlite_master m join pragma_foreign_key_list(m.name) f where m.type = 'table'`)
  const unindexed: string[] = []
  for (const { tbl, col } of keys.rows) {
    // The first column of any index (a WITHOUT ROWID table's primary key is one too), partial ones included: col = ? implies col is not null.
    const leads = await raw.execute({
      sql: `select 1 from pragma_index_list(?) l join pragma_index_info(l.name) i where i.seqno = 0 and i.name = ?`,
      args: [String(tbl), String(col)],
    })
    // An INTEGER PRIMARY KEY is the rowid itself: the table's own b-tree is keyed by it (totp_credentials.user_id).
    const rowid = await raw.execute({
      sql: `select 1 from pragma_table_info(?) where name = ? and pk = 1 and upper(type) = 'INTEGER' and (select count(*) from pragma_table_info(?) where pk > 0) = 1`,
      args: [String(tbl), String(col), String(tbl)],
    })
    if (leads.rows.length === 0 && rowid.rows.length === 0) unindexed.push(`${tbl}.${col}`)
  }
  assert.equal(unindexed, [])
  assert.ok(keys.rows.length >= 20, `${keys.rows.length} foreign keys checked`)
})

test.run()
