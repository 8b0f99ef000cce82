-- A handful of rows per catalog operation, always read and written by their key: WITHOUT ROWID.
CREATE TABLE `operation_stats` (
	`method` text NOT NULL,
	`path` text NOT NULL,
	`from_ms` integer NOT NULL,
	`calls` integer NOT NULL,
	`errors` integer NOT NULL,
	`client_errors` integer NOT NULL,
	`total_ms` real NOT NULL,
	PRIMARY KEY(`method`, `path`, `from_ms`)
) WITHOUT ROWID;
