-- A notifications page (domain/notifications.ts) reads a user's newest rows by id. With the index on
-- (user_id, id) alone, each of the page's rows was a lookup in the table by rowid, on its own page
-- (a user's notifications are spread over the 5.5 M rows of the 1M-post network): about 4 µs a row.
-- This index carries every column the page shows, so a page is one index range, and it replaces
-- the narrower one (same leading columns).
CREATE INDEX `notifications_user_page_idx` ON `notifications` (`user_id`,`id`,`actor_id`,`type`,`is_read`,`created_at`,`post_id`,`story_id`);
--> statement-breakpoint
DROP INDEX `notifications_user_id_idx`;
