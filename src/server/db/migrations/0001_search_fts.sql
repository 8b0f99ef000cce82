-- Full-text search (SQLite FTS5, external content): posts_fts indexes the content of public posts
-- only, so non-public posts can never be found by search; users_fts indexes username and full name.
-- Triggers keep both in sync with their tables in the writer's own transaction.
CREATE VIRTUAL TABLE `posts_fts` USING fts5(content, content='posts', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `posts_fts_insert` AFTER INSERT ON `posts` WHEN new.is_public = 1 BEGIN
  INSERT INTO posts_fts(rowid, content) VALUES (new.id, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `posts_fts_delete` AFTER DELETE ON `posts` WHEN old.is_public = 1 BEGIN
  INSERT INTO posts_fts(posts_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
--> statement-breakpoint
-- One trigger, so the old entry is always removed before the new one is added.
CREATE TRIGGER `posts_fts_update` AFTER UPDATE OF content, is_public ON `posts` BEGIN
  INSERT INTO posts_fts(posts_fts, rowid, content) SELECT 'delete', old.id, old.content WHERE old.is_public = 1;
  INSERT INTO posts_fts(rowid, content) SELECT new.id, new.content WHERE new.is_public = 1;
END;
--> statement-breakpoint
INSERT INTO posts_fts(rowid, content) SELECT id, content FROM posts WHERE is_public = 1;
--> statement-breakpoint
CREATE VIRTUAL TABLE `users_fts` USING fts5(username, full_name, content='users', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `users_fts_insert` AFTER INSERT ON `users` BEGIN
  INSERT INTO users_fts(rowid, username, full_name) VALUES (new.id, new.username, new.full_name);
END;
--> statement-breakpoint
CREATE TRIGGER `users_fts_delete` AFTER DELETE ON `users` BEGIN
  INSERT INTO users_fts(users_fts, rowid, username, full_name) VALUES ('delete', old.id, old.username, old.full_name);
END;
--> statement-breakpoint
-- Only a change of the indexed columns touches the index (counter updates do not).
CREATE TRIGGER `users_fts_update` AFTER UPDATE OF username, full_name ON `users` BEGIN
  INSERT INTO users_fts(users_fts, rowid, username, full_name) VALUES ('delete', old.id, old.username, old.full_name);
  INSERT INTO users_fts(rowid, username, full_name) VALUES (new.id, new.username, new.full_name);
END;
--> statement-breakpoint
INSERT INTO users_fts(rowid, username, full_name) SELECT id, username, full_name FROM users;
