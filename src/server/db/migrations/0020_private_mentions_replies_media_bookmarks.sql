-- Issue 49: private accounts and follow requests (users.is_private; follow_requests, a link table
-- WITHOUT ROWID like follows), and mentions: the accounts a post's, a comment's or a story's text
-- names, resolved when it is written, as a small JSON array (null for none).
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
ALTER TABLE `comments` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `stories` ADD `mentions` text;--> statement-breakpoint
ALTER TABLE `users` ADD `is_private` integer DEFAULT false NOT NULL;