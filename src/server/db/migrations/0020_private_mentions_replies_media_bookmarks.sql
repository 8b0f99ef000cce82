-- Issue 49: private accounts and follow requests (users.is_private; follow_requests, a link table
-- WITHOUT ROWID like follows); mentions (the accounts a post's, a comment's or a story's text
-- names, resolved when it is written, as a small JSON array, null for none); replies (a comment's
-- parent_id and a top-level comment's replies_count; the post's comments index gains parent_id, so
-- its top-level comments and each comment's replies are ranges of one index); carousels with alt
-- text (posts.media, null when `image` says it all), alt text on avatars and on a story's media
-- (stories.media_alt); bookmarks (a link table WITHOUT ROWID like likes, keyed by post then user,
-- listed by user and time).
CREATE TABLE `bookmarks` (
	`post_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`post_id`, `user_id`),
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `bookmarks_user_created_idx` ON `bookmarks` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `follow_requests` (
	`requester_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`notification_id` integer,
	PRIMARY KEY(`requester_id`, `target_id`),
	FOREIGN KEY (`requester_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `follow_requests_target_created_idx` ON `follow_requests` (`target_id`,`created_at`);--> statement-breakpoint
DROP INDEX `comments_post_created_idx`;--> statement-breakpoint
ALTER TABLE `comments` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `comments` ADD `parent_id` integer;--> statement-breakpoint
ALTER TABLE `comments` ADD `replies_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `comments_post_parent_created_idx` ON `comments` (`post_id`,`parent_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `posts` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `media` text;--> statement-breakpoint
ALTER TABLE `stories` ADD `media_alt` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `users` ADD `avatar_alt` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `is_private` integer DEFAULT false NOT NULL;