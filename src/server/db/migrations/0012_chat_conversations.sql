CREATE TABLE `chat_conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`key_id` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`next_seq` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `gateway_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `chat_conversations_updated_idx` ON `chat_conversations` (`updated_at`);--> statement-breakpoint
CREATE INDEX `chat_conversations_key_idx` ON `chat_conversations` (`key_id`);--> statement-breakpoint
CREATE TABLE `chat_messages` (
	`conversation_id` text NOT NULL,
	`seq` integer NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	PRIMARY KEY(`conversation_id`, `seq`),
	FOREIGN KEY (`conversation_id`) REFERENCES `chat_conversations`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
