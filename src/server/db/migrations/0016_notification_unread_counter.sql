ALTER TABLE `users` ADD `notifications_unread` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `notifications_read_upto` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `users` SET
	`notifications_unread` = (SELECT count(*) FROM `notifications` n WHERE n.user_id = `users`.id AND n.is_read = 0),
	`notifications_read_upto` = coalesce(
		(SELECT min(n.id) - 1 FROM `notifications` n WHERE n.user_id = `users`.id AND n.is_read = 0),
		(SELECT max(n.id) FROM `notifications` n WHERE n.user_id = `users`.id),
		0);--> statement-breakpoint
CREATE TRIGGER `notifications_unread_insert` AFTER INSERT ON `notifications` WHEN new.is_read = 0
BEGIN UPDATE `users` SET `notifications_unread` = `notifications_unread` + 1 WHERE `id` = new.user_id; END;--> statement-breakpoint
CREATE TRIGGER `notifications_unread_delete` AFTER DELETE ON `notifications` WHEN old.is_read = 0
BEGIN UPDATE `users` SET `notifications_unread` = `notifications_unread` - 1 WHERE `id` = old.user_id; END;--> statement-breakpoint
CREATE TRIGGER `notifications_unread_update` AFTER UPDATE OF `is_read`, `user_id` ON `notifications`
WHEN old.is_read <> new.is_read OR old.user_id <> new.user_id
BEGIN
	UPDATE `users` SET `notifications_unread` = `notifications_unread` - 1 WHERE `id` = old.user_id AND old.is_read = 0;
	UPDATE `users` SET `notifications_unread` = `notifications_unread` + 1 WHERE `id` = new.user_id AND new.is_read = 0;
END;--> statement-breakpoint
DROP INDEX `notifications_user_unread_idx`;
