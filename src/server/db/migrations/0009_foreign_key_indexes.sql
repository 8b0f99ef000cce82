-- Every foreign key's child columns get an index: with foreign_keys=ON, deleting a post, a story
-- or an account (issue 13) makes SQLite find the rows that point at it, and without an index on
-- notifications.post_id, .story_id, .actor_id, story_views.viewer_id or reports.reporter_id that
-- is a scan of the whole table per deleted row. Partial where most rows hold null.
CREATE INDEX `notifications_post_idx` ON `notifications` (`post_id`) WHERE "notifications"."post_id" is not null;--> statement-breakpoint
CREATE INDEX `notifications_story_idx` ON `notifications` (`story_id`) WHERE "notifications"."story_id" is not null;--> statement-breakpoint
CREATE INDEX `notifications_actor_idx` ON `notifications` (`actor_id`);--> statement-breakpoint
CREATE INDEX `reports_reporter_idx` ON `reports` (`reporter_id`);--> statement-breakpoint
CREATE INDEX `story_views_viewer_idx` ON `story_views` (`viewer_id`);