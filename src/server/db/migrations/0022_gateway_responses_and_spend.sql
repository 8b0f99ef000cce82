CREATE TABLE `gateway_responses` (
	`id` text PRIMARY KEY NOT NULL,
	`key_id` integer,
	`created_at` integer NOT NULL,
	`provider` text,
	`body` text NOT NULL,
	`context` text,
	FOREIGN KEY (`key_id`) REFERENCES `gateway_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `gateway_responses_created_idx` ON `gateway_responses` (`created_at`);--> statement-breakpoint
CREATE INDEX `gateway_responses_key_idx` ON `gateway_responses` (`key_id`);--> statement-breakpoint
ALTER TABLE `gateway_keys` ADD `budget_nanos` integer;--> statement-breakpoint
ALTER TABLE `gateway_keys` ADD `used_nanos` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `gateway_usage` ADD `cached_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `gateway_usage` ADD `cost_nanos` integer DEFAULT 0 NOT NULL;