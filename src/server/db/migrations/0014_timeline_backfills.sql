CREATE TABLE `timeline_backfills` (
	`follower_id` integer NOT NULL,
	`followee_id` integer NOT NULL,
	PRIMARY KEY(`follower_id`, `followee_id`)
) WITHOUT ROWID;
