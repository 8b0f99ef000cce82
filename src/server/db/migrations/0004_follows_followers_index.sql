-- Fan-out on write (domain/timelines.ts) reads every follower id of a post's author. With only
-- follows_following_created_idx (following_id, created_at) each follower id was a lookup in the
-- follows table by rowid: one random page per follower, about 125 per post at 12.5 M follows.
-- This index holds the ids themselves, so the fan-out reads one index range.
CREATE INDEX `follows_following_follower_idx` ON `follows` (`following_id`,`follower_id`);
