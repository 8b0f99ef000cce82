-- Home timelines (fan-out on write, domain/timelines.ts). Hand-edited after drizzle-kit generate:
-- `timelines` is WITHOUT ROWID (the primary key is the whole row and the feed's order), plus the
-- backfill of existing data and the posts_fts prefix index below.
CREATE TABLE `timeline_floors` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `timeline_pulled_authors` (
	`user_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `timelines` (
	`user_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`post_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `created_at`, `post_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Backfill: each user's newest 801 feed posts (their own and their followees'); 800 is
-- TIMELINE_CAP in domain/timelines.ts, the 801st only marks where a full timeline stops.
-- Every existing account is treated as fanned out (timeline_pulled_authors starts empty).
INSERT INTO timelines (user_id, created_at, post_id)
SELECT u.id, p.created_at, p.id FROM users u JOIN posts p ON p.id IN (
  SELECT id FROM (
    SELECT p2.id, p2.created_at FROM follows f JOIN posts p2 ON p2.id IN (
      SELECT p3.id FROM posts p3 WHERE p3.user_id = f.following_id ORDER BY p3.created_at DESC, p3.id DESC LIMIT 801
    ) WHERE f.follower_id = u.id
    UNION ALL
    SELECT id, created_at FROM (SELECT p4.id, p4.created_at FROM posts p4 WHERE p4.user_id = u.id ORDER BY p4.created_at DESC, p4.id DESC LIMIT 801)
  ) ORDER BY created_at DESC, id DESC LIMIT 801
);
--> statement-breakpoint
-- A timeline that got all 801 is full: it is complete only above its oldest entry's time.
INSERT INTO timeline_floors (user_id, created_at)
SELECT user_id, min(created_at) FROM timelines GROUP BY user_id HAVING count(*) > 800;
--> statement-breakpoint
DELETE FROM timelines WHERE created_at <= (SELECT f.created_at FROM timeline_floors f WHERE f.user_id = timelines.user_id);
--> statement-breakpoint
-- Post search: a prefix index for 2- and 3-character prefixes. Every query word is a prefix
-- query, and without it a short common prefix ("th", "the") merges the doclists of every
-- matching term at each search; with it that is one doclist read. Same table, same triggers.
DROP TABLE `posts_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `posts_fts` USING fts5(content, content='posts', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
--> statement-breakpoint
INSERT INTO posts_fts(rowid, content) SELECT id, content FROM posts WHERE is_public = 1;
