-- A notification's actor loses its foreign key and its index (notifications_actor_idx). Each was
-- paid with every like, comment and follow (a random leaf of the index written; about a tenth of a
-- follow's cost) for the rare deletion of an account, which deleting the user's row made SQLite look
-- up. An account's deletion, and a suspension, now find the notifications it caused by a scan off
-- the write lock (domain/notifications.ts, notificationsCausedBy).
-- SQLite cannot drop a foreign key with ALTER, so the table is rebuilt the way it documents: new
-- table, copy in id order, drop, rename, indexes and the unread counter's triggers (0016) again
-- (foreign keys are off while migrations run). The AUTOINCREMENT high-water mark is carried over,
-- so the ids of notifications deleted before this never come back.
CREATE TABLE `notifications_rebuilt` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`actor_id` integer NOT NULL,
	`type` text NOT NULL,
	`post_id` integer,
	`story_id` integer,
	`is_read` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`story_id`) REFERENCES `stories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `notifications_rebuilt` (`id`, `user_id`, `actor_id`, `type`, `post_id`, `story_id`, `is_read`, `created_at`)
SELECT `id`, `user_id`, `actor_id`, `type`, `post_id`, `story_id`, `is_read`, `created_at` FROM `notifications` ORDER BY `id`;
--> statement-breakpoint
INSERT INTO `sqlite_sequence` (`name`, `seq`)
SELECT 'notifications_rebuilt', `seq` FROM `sqlite_sequence` WHERE `name` = 'notifications'
	AND NOT EXISTS (SELECT 1 FROM `sqlite_sequence` WHERE `name` = 'notifications_rebuilt');
--> statement-breakpoint
UPDATE `sqlite_sequence` SET `seq` = max(`seq`, coalesce((SELECT `seq` FROM `sqlite_sequence` WHERE `name` = 'notifications'), 0))
WHERE `name` = 'notifications_rebuilt';
--> statement-breakpoint
DROP TABLE `notifications`;
--> statement-breakpoint
ALTER TABLE `notifications_rebuilt` RENAME TO `notifications`;
--> statement-breakpoint
CREATE INDEX `notifications_user_page_idx` ON `notifications` (`user_id`,`id`,`actor_id`,`type`,`is_read`,`created_at`,`post_id`,`story_id`);
--> statement-breakpoint
CREATE INDEX `notifications_post_idx` ON `notifications` (`post_id`) WHERE "notifications"."post_id" is not null;
--> statement-breakpoint
CREATE INDEX `notifications_story_idx` ON `notifications` (`story_id`) WHERE "notifications"."story_id" is not null;
--> statement-breakpoint
CREATE TRIGGER `notifications_unread_insert` AFTER INSERT ON `notifications` WHEN new.is_read = 0
BEGIN UPDATE `users` SET `notifications_unread` = `notifications_unread` + 1 WHERE `id` = new.user_id; END;
--> statement-breakpoint
CREATE TRIGGER `notifications_unread_delete` AFTER DELETE ON `notifications` WHEN old.is_read = 0
BEGIN UPDATE `users` SET `notifications_unread` = `notifications_unread` - 1 WHERE `id` = old.user_id; END;
--> statement-breakpoint
CREATE TRIGGER `notifications_unread_update` AFTER UPDATE OF `is_read`, `user_id` ON `notifications`
WHEN old.is_read <> new.is_read OR old.user_id <> new.user_id
BEGIN
	UPDATE `users` SET `notifications_unread` = `notifications_unread` - 1 WHERE `id` = old.user_id AND old.is_read = 0;
	UPDATE `users` SET `notifications_unread` = `notifications_unread` + 1 WHERE `id` = new.user_id AND new.is_read = 0;
END;
