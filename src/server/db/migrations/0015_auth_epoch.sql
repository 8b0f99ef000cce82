CREATE TABLE `auth_epoch` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL,
	CONSTRAINT "auth_epoch_one_row" CHECK("auth_epoch"."id" = 1)
);
--> statement-breakpoint
INSERT INTO `auth_epoch` (`id`, `generation`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `sessions_auth_update` AFTER UPDATE OF `token_hash`, `user_id`, `expires_at`, `revoked_at` ON `sessions`
BEGIN UPDATE `auth_epoch` SET `generation` = `generation` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `sessions_auth_delete` AFTER DELETE ON `sessions`
BEGIN UPDATE `auth_epoch` SET `generation` = `generation` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `users_auth_update` AFTER UPDATE OF `username`, `email`, `full_name`, `avatar`, `suspended_at` ON `users`
BEGIN UPDATE `auth_epoch` SET `generation` = `generation` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `users_auth_delete` AFTER DELETE ON `users`
BEGIN UPDATE `auth_epoch` SET `generation` = `generation` + 1 WHERE `id` = 1; END;
