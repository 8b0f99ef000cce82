-- Deferred fan-out (domain/fanout.ts): a post is written into its followers' timelines after its
-- own transaction, by a background runner. This one row is the runner's cursor: every post with
-- id <= post_id has been fanned out. Hand-edited after drizzle-kit generate: the cursor starts at
-- the newest post, since every existing post was fanned out in its own transaction.
CREATE TABLE `timeline_fanout` (
	`id` integer PRIMARY KEY NOT NULL,
	`post_id` integer NOT NULL,
	CONSTRAINT "timeline_fanout_one_row" CHECK("timeline_fanout"."id" = 1)
);
--> statement-breakpoint
INSERT INTO `timeline_fanout` (`id`, `post_id`) SELECT 1, coalesce(max(`id`), 0) FROM `posts`;
