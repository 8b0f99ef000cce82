-- Hardening (issue 11): shared rate-limit counters, and an expiry for generated files.
CREATE TABLE `rate_limits` (
	`key` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `rate_limits_window_idx` ON `rate_limits` (`window_start`);--> statement-breakpoint
ALTER TABLE `uploads` ADD `expires_at` integer;--> statement-breakpoint
CREATE INDEX `uploads_expires_idx` ON `uploads` (`expires_at`,`size`) WHERE "uploads"."expires_at" IS NOT NULL;