-- A post's media items carry what their uploads recorded (post-media.ts): [path, alt, width, height, blurhash, poster, mime].
-- Carousels and images with alt text: each item with its upload's record (an item whose upload is gone keeps [path, alt]).
UPDATE `posts` SET `media` = (
	SELECT json_group_array(CASE WHEN `u`.`path` IS NULL THEN json_array(`je`.`value` ->> 0, `je`.`value` ->> 1) ELSE json_array(`je`.`value` ->> 0, `je`.`value` ->> 1, `u`.`width`, `u`.`height`, `u`.`blurhash`, `u`.`poster`, `u`.`mime`) END)
	FROM json_each(`posts`.`media`) AS `je` LEFT JOIN `uploads` AS `u` ON `u`.`path` = `je`.`value` ->> 0
) WHERE `media` IS NOT NULL;--> statement-breakpoint
-- A lone image without alt text: stored now when its upload is known.
UPDATE `posts` SET `media` = (
	SELECT json_array(json_array(`posts`.`image`, '', `u`.`width`, `u`.`height`, `u`.`blurhash`, `u`.`poster`, `u`.`mime`)) FROM `uploads` AS `u` WHERE `u`.`path` = `posts`.`image`
) WHERE `media` IS NULL AND `image` != '';
