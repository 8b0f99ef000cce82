CREATE TABLE `gateway_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`models` text,
	`rpm` integer,
	`tpm` integer,
	`budget_tokens` integer,
	`used_tokens` integer DEFAULT 0 NOT NULL,
	`premium` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `gateway_keys_hash_idx` ON `gateway_keys` (`key_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `gateway_keys_live_name_idx` ON `gateway_keys` (`name`) WHERE "gateway_keys"."revoked_at" is null;--> statement-breakpoint
CREATE TABLE `gateway_usage` (
	`key_id` integer NOT NULL,
	`day` text NOT NULL,
	`model` text NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`errors` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`key_id`, `day`, `model`),
	FOREIGN KEY (`key_id`) REFERENCES `gateway_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `gateway_usage_day_idx` ON `gateway_usage` (`day`);