CREATE TABLE `gateway_key_minutes` (
	`key_id` integer NOT NULL,
	`second` integer NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`key_id`, `second`),
	FOREIGN KEY (`key_id`) REFERENCES `gateway_keys`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
