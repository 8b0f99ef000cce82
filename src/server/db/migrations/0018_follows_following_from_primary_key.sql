-- Whom a user follows is listed from the primary key's range (follower_id, following_id), sorted by
-- time: a user follows hundreds, and the page that reads more than INLINE_PAGE_DEPTH rows goes to a
-- scan worker (domain/follows.ts). The index (follower_id, created_at) served only that list and
-- cost every follow and unfollow a random leaf of its own under the write lock: on the 1M-post
-- network, follow alone answered 2,192 / 2,038 / 2,444 req/s without it against 1,932 / 2,037 /
-- 2,007 with it, alternated (docs/social.md, Data layer).
DROP INDEX `follows_follower_created_idx`;
