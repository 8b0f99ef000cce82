/**
 * The one schema module. Times are Unix milliseconds (integers); the API formats them.
 * Counters shown on profiles and posts are kept here and changed in the same transaction as the rows they count.
 */
import { sql } from 'drizzle-orm'
import { check, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    username: text('username').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    fullName: text('full_name').notNull().default(''),
    bio: text('bio').notNull().default(''),
    avatar: text('avatar').notNull().default(''),
    /** The avatar's description for screen readers (migration 0020), up to 1,500 characters; '' for none. */
    avatarAlt: text('avatar_alt').notNull().default(''),
    isVerified: integer('is_verified', { mode: 'boolean' }).notNull().default(false),
    followersCount: integer('followers_count').notNull().default(0),
    followingCount: integer('following_count').notNull().default(0),
    postsCount: integer('posts_count').notNull().default(0),
    /**
     * How many of the user's notifications are unread: kept exact by triggers on `notifications`
     * (migration 0016: insert, delete, including the deletes of foreign-key cascades, and a change
     * of is_read), so the badge is one read of this row and no index of unread rows is written per
     * notification.
     */
    notificationsUnread: integer('notifications_unread').notNull().default(0),
    /**
     * Every notification of the user with an id up to this one is read (mark all read sets it to
     * their newest; ids only grow), so unread rows are found past it in notifications_user_page_idx.
     */
    notificationsReadUpto: integer('notifications_read_upto').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    /** Set by a moderator (`plaza admin reports resolve --action suspend`): the user cannot log in or act, and their content is hidden. */
    suspendedAt: integer('suspended_at'),
    /** When the owner proved they read mail at `email` (a verification link, or a password reset by mail); null while unproven. */
    emailVerifiedAt: integer('email_verified_at'),
    /** An address the owner asked to change to, mailed a verification link; it replaces `email` once verified. */
    pendingEmail: text('pending_email'),
    /**
     * A private account (migration 0020): following it is a request the owner approves
     * (`follow_requests`), and only the owner and approved followers see its posts, stories and
     * follow lists; everyone sees the profile's header and counts.
     */
    isPrivate: integer('is_private', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [
    uniqueIndex('users_username_lower_idx').on(sql`lower(${t.username})`),
    uniqueIndex('users_email_lower_idx').on(sql`lower(${t.email})`),
    // The few suspended accounts, read as one set by every list that hides their content.
    index('users_suspended_idx')
      .on(t.id)
      .where(sql`${t.suspendedAt} is not null`),
  ],
)

export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
    /** The User-Agent the session was opened with (GET /auth/sessions shows it). */
    userAgent: text('user_agent').notNull().default(''),
    /** When the token was last presented, kept at most about once a minute per session. */
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [uniqueIndex('sessions_token_hash_idx').on(t.tokenHash), index('sessions_user_idx').on(t.userId)],
)

/**
 * One row whose `generation` moves whenever what a session lookup answers may have changed
 * (migration 0015's triggers: a session revoked, re-timed or deleted; a user suspended, renamed or
 * deleted, or their email, full name or avatar changed). Each process keeps the sessions it has
 * resolved (auth/sessions.ts `SessionCache`) and trusts them while this number stands still, so a
 * request costs one read of this row instead of a probe of `sessions` and `users`. The triggers
 * make every writer keep it, whatever code path (or process, or host) the change comes from.
 */
export const authEpoch = sqliteTable(
  'auth_epoch',
  {
    id: integer('id').primaryKey(),
    generation: integer('generation').notNull(),
  },
  (t) => [check('auth_epoch_one_row', sql`${t.id} = 1`)],
)

/** A link table, WITHOUT ROWID since migration 0005 (drizzle's schema cannot say so; the migration does). */
export const follows = sqliteTable(
  'follows',
  {
    followerId: integer('follower_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    followingId: integer('following_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.followerId, t.followingId] }),
    // WITHOUT ROWID (migration 0005): this index also holds follower_id, so a post's fan-out reads one range of it.
    index('follows_following_created_idx').on(t.followingId, t.createdAt),
    // Whom a user follows is the primary key's range (follower_id, following_id), sorted by time when
    // listed: no index of its own (migration 0018), one random leaf fewer for every follow.
  ],
)

export const posts = sqliteTable(
  'posts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text('content').notNull().default(''),
    image: text('image').notNull().default(''),
    isPublic: integer('is_public', { mode: 'boolean' }).notNull().default(true),
    likesCount: integer('likes_count').notNull().default(0),
    commentsCount: integer('comments_count').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    /** When the author last edited the content or visibility (PUT /posts/{id}); null when never. */
    editedAt: integer('edited_at'),
    /** The accounts `@named` in the content, as resolved when it was written: `[[user_id, username, start, end], ...]`, null for none (mentions.ts). */
    mentions: text('mentions'),
    /**
     * A carousel (migration 0020): `[[path, alt], ...]`, up to 10 uploads in order, the first being
     * `image`; null when the post has at most its one `image` and no alt text (post-media.ts).
     */
    media: text('media'),
  },
  (t) => [
    index('posts_user_created_idx').on(t.userId, t.createdAt),
    index('posts_public_created_idx').on(t.isPublic, t.createdAt),
  ],
)

/**
 * Pending requests to follow a private account (migration 0020, WITHOUT ROWID like `follows`): the
 * owner approves (the row becomes a follow) or denies (it goes). `notification_id` is the owner's
 * `follow_request` notification, deleted with the request.
 */
export const followRequests = sqliteTable(
  'follow_requests',
  {
    requesterId: integer('requester_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    targetId: integer('target_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    notificationId: integer('notification_id'),
  },
  (t) => [
    primaryKey({ columns: [t.requesterId, t.targetId] }),
    // The owner's list, newest first (WITHOUT ROWID: the index carries requester_id for ties).
    index('follow_requests_target_created_idx').on(t.targetId, t.createdAt),
  ],
)

/** A link table, WITHOUT ROWID since migration 0005, like `follows`. */
export const likes = sqliteTable(
  'likes',
  {
    postId: integer('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.postId, t.userId] }), index('likes_user_idx').on(t.userId)],
)

/**
 * Posts a user saved to look at later (migration 0020, WITHOUT ROWID like likes): private to that
 * user. The key leads with the post, as likes' does, so a post's page probes it for `bookmarked`
 * and a deleted post finds its rows; the user's list is `bookmarks_user_created_idx`.
 */
export const bookmarks = sqliteTable(
  'bookmarks',
  {
    postId: integer('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.postId, t.userId] }), index('bookmarks_user_created_idx').on(t.userId, t.createdAt)],
)

export const comments = sqliteTable(
  'comments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    postId: integer('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text('content').notNull(),
    image: text('image').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    /** As posts.mentions. */
    mentions: text('mentions'),
    /**
     * The top-level comment this one replies to (migration 0020); null for a top-level comment.
     * One level, as Instagram: a reply to a reply attaches to the same top-level comment. No foreign
     * key: deleting a comment deletes its replies itself (removal.ts), with every count.
     */
    parentId: integer('parent_id'),
    /** How many replies a top-level comment has, kept in the same transaction as the rows. */
    repliesCount: integer('replies_count').notNull().default(0),
  },
  (t) => [
    // A post's top-level comments are its range with parent_id null (SQLite's index takes `IS NULL`
    // as an equality), a comment's replies the range (post_id, parent_id): oldest first, no sort.
    index('comments_post_parent_created_idx').on(t.postId, t.parentId, t.createdAt),
    index('comments_user_idx').on(t.userId),
  ],
)

export const hashtags = sqliteTable(
  'hashtags',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** Lower-cased, without the '#'. */
    tag: text('tag').notNull(),
    postsCount: integer('posts_count').notNull().default(0),
  },
  (t) => [uniqueIndex('hashtags_tag_idx').on(t.tag)],
)

export const postHashtags = sqliteTable(
  'post_hashtags',
  {
    postId: integer('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    hashtagId: integer('hashtag_id')
      .notNull()
      .references(() => hashtags.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.postId, t.hashtagId] }), index('post_hashtags_hashtag_idx').on(t.hashtagId, t.postId)],
)

export const stories = sqliteTable(
  'stories',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    contentType: text('content_type', { enum: ['text', 'image', 'video'] }).notNull(),
    mediaUrl: text('media_url').notNull().default(''),
    /** media_url described for screen readers ('' for none, and for a text story). */
    mediaAlt: text('media_alt').notNull().default(''),
    textContent: text('text_content'),
    backgroundColor: text('background_color').notNull().default('#000000'),
    textColor: text('text_color').notNull().default('#FFFFFF'),
    fontFamily: text('font_family').notNull().default(''),
    fontSize: integer('font_size').notNull().default(24),
    textAlignment: text('text_alignment').notNull().default('center'),
    duration: integer('duration').notNull().default(5),
    privacyType: text('privacy_type', { enum: ['followers', 'public'] }).notNull().default('public'),
    viewsCount: integer('views_count').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    /** As posts.mentions, of text_content. */
    mentions: text('mentions'),
  },
  (t) => [index('stories_user_expires_idx').on(t.userId, t.expiresAt), index('stories_expires_idx').on(t.expiresAt)],
)

export const storyViews = sqliteTable(
  'story_views',
  {
    storyId: integer('story_id')
      .notNull()
      .references(() => stories.id, { onDelete: 'cascade' }),
    viewerId: integer('viewer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.storyId, t.viewerId] }), index('story_views_viewer_idx').on(t.viewerId)],
)

export const notifications = sqliteTable(
  'notifications',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The recipient. */
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /**
     * Who acted. No foreign key and no index (migration 0017): each would be written or checked with
     * every like, comment and follow, for the rare deletion of an account. That deletion, and a
     * suspension, find the account's notifications by a scan off the write lock (notifications.ts,
     * notificationsCausedBy), so nothing here refers to a user who is gone.
     */
    actorId: integer('actor_id').notNull(),
    type: text('type', { enum: ['like', 'comment', 'follow', 'story_view', 'follow_request', 'mention', 'reply'] }).notNull(),
    postId: integer('post_id').references(() => posts.id, { onDelete: 'cascade' }),
    storyId: integer('story_id').references(() => stories.id, { onDelete: 'cascade' }),
    isRead: integer('is_read', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    // Every column a page shows, so a page is one index range (migration 0007).
    index('notifications_user_page_idx').on(t.userId, t.id, t.actorId, t.type, t.isRead, t.createdAt, t.postId, t.storyId),
    // The child keys of the foreign keys (migration 0009): deleting a post or a story finds its
    // notifications here, not by scanning the table. Partial where most rows have none.
    index('notifications_post_idx')
      .on(t.postId)
      .where(sql`${t.postId} is not null`),
    index('notifications_story_idx')
      .on(t.storyId)
      .where(sql`${t.storyId} is not null`),
  ],
)

/** Every file the upload pipeline stored, with who stored it. */
export const uploads = sqliteTable(
  'uploads',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    kind: text('kind', { enum: ['avatars', 'posts', 'stories', 'comments', 'codeimages', 'imagefx', 'expand', 'upscale', 'carbon', 'meme', 'fakepost', 'logo', 'tts', 'imagine', 'toanime', 'zombie', 'removebg', 'files'] }).notNull(),
    path: text('path').notNull(),
    mime: text('mime').notNull(),
    size: integer('size').notNull(),
    width: integer('width'),
    height: integer('height'),
    /** A BlurHash of an image (or of a video's poster frame), computed once at upload. */
    blurhash: text('blurhash'),
    /** For a video: the path of its poster frame, itself a row of this table. */
    poster: text('poster'),
    createdAt: integer('created_at').notNull(),
    /** Generated files (code images, catalog outputs) expire; user uploads never do (null). */
    expiresAt: integer('expires_at'),
  },
  (t) => [
    uniqueIndex('uploads_path_idx').on(t.path),
    index('uploads_user_idx').on(t.userId),
    index('uploads_expires_idx').on(t.expiresAt, t.size).where(sql`${t.expiresAt} IS NOT NULL`),
  ],
)

/**
 * Fixed-window rate-limit counters, shared by every process on the database and kept across
 * restarts; one atomic upsert per counted request.
 */
export const rateLimits = sqliteTable(
  'rate_limits',
  {
    key: text('key').primaryKey(),
    windowStart: integer('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [index('rate_limits_window_idx').on(t.windowStart)],
)

/**
 * Home timelines, fanned out on write: a post's id is written into the timeline of its author
 * and of each follower, soon after the post (domain/fanout.ts, domain/timelines.ts). The key is the
 * feed's order, so a feed page is one range of the primary key. WITHOUT ROWID (migration 0003):
 * the primary key is the table.
 */
export const timelines = sqliteTable(
  'timelines',
  {
    userId: integer('user_id').notNull(),
    createdAt: integer('created_at').notNull(),
    postId: integer('post_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.createdAt, t.postId] })],
)

/**
 * Where a trimmed timeline stops being complete: every post the user's feed holds with
 * `created_at` above this is in `timelines`; older ones may have been trimmed. No row: complete.
 */
export const timelineFloors = sqliteTable('timeline_floors', {
  userId: integer('user_id').primaryKey(),
  createdAt: integer('created_at').notNull(),
})

/**
 * Accounts whose posts are not fanned out but read from `posts` when a follower's feed is read
 * (they had more than PLAZA_FANOUT_MAX_FOLLOWERS followers when a post of theirs was fanned out). An account never
 * leaves: its later posts are in no timeline, so the feed must keep pulling them.
 */
export const timelinePulledAuthors = sqliteTable('timeline_pulled_authors', {
  userId: integer('user_id').primaryKey(),
})

/**
 * Follows whose timeline backfill is pending (migration 0014, domain/fanout.ts): a follow's
 * transaction records the pair here, and the fan-out runner writes the followee's newest posts
 * into the follower's timeline later, as Mastodon's MergeWorker does. Meanwhile the feed reads
 * those followees' newest posts from `posts` (timelines.ts), so it is exact whatever is pending.
 * A pair whose follow is gone (unfollow, block, a deleted account) is dropped by the runner.
 */
export const timelineBackfills = sqliteTable(
  'timeline_backfills',
  {
    followerId: integer('follower_id').notNull(),
    followeeId: integer('followee_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.followerId, t.followeeId] })],
)

/**
 * How far the deferred fan-out has got (migration 0006, domain/fanout.ts): every post with
 * `id <= post_id` has been written into its timelines; later ones are *pending* and the feed reads
 * them from `posts`. One row: post ids commit in order, so one number says which posts are pending.
 */
export const timelineFanout = sqliteTable(
  'timeline_fanout',
  {
    id: integer('id').primaryKey(),
    postId: integer('post_id').notNull(),
  },
  (t) => [check('timeline_fanout_one_row', sql`${t.id} = 1`)],
)

/** A link table (WITHOUT ROWID, migration 0008): `blocker_id` blocked `blocked_id`. Either side's view hides the other. */
export const blocks = sqliteTable(
  'blocks',
  {
    blockerId: integer('blocker_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    blockedId: integer('blocked_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.blockerId, t.blockedId] }),
    index('blocks_blocked_idx').on(t.blockedId, t.blockerId),
    index('blocks_blocker_created_idx').on(t.blockerId, t.createdAt),
  ],
)

/** A link table (WITHOUT ROWID, migration 0008): `muter_id` muted `muted_id`, whose posts and stories leave the muter's feeds only. */
export const mutes = sqliteTable(
  'mutes',
  {
    muterId: integer('muter_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    mutedId: integer('muted_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.muterId, t.mutedId] }),
    index('mutes_muted_idx').on(t.mutedId, t.muterId),
    index('mutes_muter_created_idx').on(t.muterId, t.createdAt),
  ],
)

/**
 * A user's report of a post, comment, story or user. One open report per reporter and target
 * (`reports_open_idx`); a moderator resolves it with an action (`moderation_actions`).
 */
export const reports = sqliteTable(
  'reports',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    reporterId: integer('reporter_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    targetType: text('target_type', { enum: ['post', 'comment', 'story', 'user'] }).notNull(),
    targetId: integer('target_id').notNull(),
    /** The author of the reported content (or the reported user): whom `suspend` acts on. */
    targetUserId: integer('target_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    reason: text('reason').notNull(),
    note: text('note').notNull().default(''),
    status: text('status', { enum: ['open', 'resolved'] }).notNull().default('open'),
    /** The resolving action: dismiss, remove or suspend. */
    resolution: text('resolution', { enum: ['dismiss', 'remove', 'suspend'] }),
    resolvedAt: integer('resolved_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('reports_open_idx')
      .on(t.reporterId, t.targetType, t.targetId)
      .where(sql`${t.status} = 'open'`),
    index('reports_status_idx').on(t.status, t.id),
    index('reports_target_idx').on(t.targetType, t.targetId),
    index('reports_target_user_idx').on(t.targetUserId),
    index('reports_reporter_idx').on(t.reporterId),
  ],
)

/**
 * Every moderation action, kept as the operator's record: who (the operator's name), when, what.
 * No foreign keys: the record outlives what it acted on.
 */
export const moderationActions = sqliteTable(
  'moderation_actions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    moderator: text('moderator').notNull(),
    action: text('action', { enum: ['dismiss', 'remove', 'suspend', 'unsuspend'] }).notNull(),
    reportId: integer('report_id'),
    targetType: text('target_type', { enum: ['post', 'comment', 'story', 'user'] }).notNull(),
    targetId: integer('target_id').notNull(),
    note: text('note').notNull().default(''),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('moderation_actions_created_idx').on(t.createdAt)],
)

/**
 * All-time call statistics of the utility catalog's operations (GET /api/stats), one row per
 * operation and latency bucket so that every figure is a sum: a flush adds its counts to the rows
 * in one statement, and the p95 is read from the buckets. Written in batches (metrics/operation-stats.ts).
 */
export const operationStats = sqliteTable(
  'operation_stats',
  {
    method: text('method').notNull(),
    /** The registry's path template, e.g. `/api/codeimage`. */
    path: text('path').notNull(),
    /** The bucket: calls that took from this many milliseconds up to the next bucket's bound. */
    fromMs: integer('from_ms').notNull(),
    calls: integer('calls').notNull(),
    /** Answers with status 500 or more. */
    errors: integer('errors').notNull(),
    /** Answers with status 400 to 499. */
    clientErrors: integer('client_errors').notNull(),
    totalMs: real('total_ms').notNull(),
  },
  (t) => [primaryKey({ columns: [t.method, t.path, t.fromMs] })],
)

/**
 * Keys of the chat gateway (`plaza admin keys`): only the SHA-256 of each key is kept. Once any key
 * exists the gateway requires one. A name is unique among live keys; revoked keys are kept (and
 * keep the gateway closed) so that their usage stays attributed.
 */
export const gatewayKeys = sqliteTable(
  'gateway_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    /** The model names the key may use, as a JSON array; null allows every name. */
    models: text('models', { mode: 'json' }).$type<string[]>(),
    rpm: integer('rpm'),
    tpm: integer('tpm'),
    /** Total tokens the key may use over its life; null for no budget. */
    budgetTokens: integer('budget_tokens'),
    /** Tokens used so far, added in the transaction that writes the usage rows. */
    usedTokens: integer('used_tokens').notNull().default(0),
    /** What the key may spend over its life, in nano-dollars (chat/prices.ts); null for no money budget. */
    budgetNanos: integer('budget_nanos'),
    /** What it has spent so far, in nano-dollars, added with `used_tokens`. */
    usedNanos: integer('used_nanos').notNull().default(0),
    premium: integer('premium', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [
    uniqueIndex('gateway_keys_hash_idx').on(t.keyHash),
    uniqueIndex('gateway_keys_live_name_idx')
      .on(t.name)
      .where(sql`${t.revokedAt} is null`),
  ],
)

/** A key's usage per UTC day and model name (as the client asked for it), written in batches. */
export const gatewayUsage = sqliteTable(
  'gateway_usage',
  {
    keyId: integer('key_id')
      .notNull()
      .references(() => gatewayKeys.id, { onDelete: 'cascade' }),
    /** `YYYY-MM-DD`, UTC. */
    day: text('day').notNull(),
    model: text('model').notNull(),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    requests: integer('requests').notNull().default(0),
    errors: integer('errors').notNull().default(0),
    /** Prompt tokens the provider read from its cache (counted in `prompt_tokens` too). */
    cachedTokens: integer('cached_tokens').notNull().default(0),
    /** What the calls cost by the price table (chat/prices.ts), in nano-dollars. */
    costNanos: integer('cost_nanos').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.day, t.model] }), index('gateway_usage_day_idx').on(t.day)],
)

/**
 * Conversations of `GET|POST /api/chat` (chat/conversations.ts): the server keeps the history so a
 * client sends only its next message. The id is random (possession is access); a conversation idle
 * for 24 hours is gone. `keyId` ties it to the gateway key that started it, when there was one.
 */
export const chatConversations = sqliteTable(
  'chat_conversations',
  {
    id: text('id').primaryKey(),
    keyId: integer('key_id').references(() => gatewayKeys.id, { onDelete: 'cascade' }),
    /** Unix milliseconds. */
    createdAt: integer('created_at').notNull(),
    /** Unix milliseconds of the last message: the conversation expires 24 hours after it. */
    updatedAt: integer('updated_at').notNull(),
    /** The next message's `seq` (messages are numbered from 0, oldest first). */
    nextSeq: integer('next_seq').notNull().default(0),
  },
  (t) => [index('chat_conversations_updated_idx').on(t.updatedAt), index('chat_conversations_key_idx').on(t.keyId)],
)

export const chatMessages = sqliteTable(
  'chat_messages',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => chatConversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: ['system', 'user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.seq] })],
)

/**
 * Answers of `POST /v1/responses` kept for `previous_response_id` and `GET`/`DELETE
 * /v1/responses/{id}` (chat/surfaces/responses-store.ts). A response belongs to the key that made
 * it (another key gets 404) and is gone 24 hours after it was made, as idle conversations are.
 */
export const gatewayResponses = sqliteTable(
  'gateway_responses',
  {
    /** `resp_` and 128 random bits, or the provider's own id for one it keeps itself. */
    id: text('id').primaryKey(),
    keyId: integer('key_id').references(() => gatewayKeys.id, { onDelete: 'cascade' }),
    /** Unix milliseconds: the response expires 24 hours after it. */
    createdAt: integer('created_at').notNull(),
    /** Null when Plaza keeps the conversation (`context`); the provider's name when the provider keeps it. */
    provider: text('provider'),
    /** The response object as it was answered (JSON). */
    body: text('body').notNull(),
    /** The conversation up to and including this response, as chat messages (JSON); null when the provider keeps it. */
    context: text('context'),
  },
  (t) => [index('gateway_responses_created_idx').on(t.createdAt), index('gateway_responses_key_idx').on(t.keyId)],
)

/**
 * Requests and tokens of a gateway key per second over the last minute (chat/keys/minutes.ts), so
 * that a key's rpm and tpm hold across every worker and host sharing the database. Rows older than
 * two minutes are swept. WITHOUT ROWID in the migration.
 */
export const gatewayKeyMinutes = sqliteTable(
  'gateway_key_minutes',
  {
    keyId: integer('key_id')
      .notNull()
      .references(() => gatewayKeys.id, { onDelete: 'cascade' }),
    /** Unix time in whole seconds. */
    second: integer('second').notNull(),
    requests: integer('requests').notNull().default(0),
    tokens: integer('tokens').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.second] })],
)

/**
 * Server-wide key material made once and kept (delivery/push.ts: the VAPID key pair, generated at
 * the first start unless PLAZA_VAPID_* is set). One row per name; the first writer wins, so every
 * process and host sharing the database signs with the same pair.
 */
export const instanceKeys = sqliteTable('instance_keys', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: integer('created_at').notNull(),
})

/**
 * A Web Push subscription (RFC 8030), one per session as Mastodon has one per access token: it
 * goes with its session (a revoked session's by trigger, migration 0019; an expired one's when a
 * delivery finds it dead). `alerts` maps notification types to on/off as JSON; a type it does not
 * name is on, so types added later reach existing subscriptions.
 */
export const pushSubscriptions = sqliteTable(
  'push_subscriptions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sessionId: integer('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    endpoint: text('endpoint').notNull(),
    /** The user agent's ECDH public key (P-256, uncompressed, base64url) and auth secret (16 bytes, base64url), RFC 8291. */
    p256dh: text('p256dh').notNull(),
    auth: text('auth').notNull(),
    alerts: text('alerts').notNull().default('{}'),
    /** Whose notifications are pushed: `all`, `followed` (actors the user follows), `follower` (actors following the user), `none`. */
    policy: text('policy', { enum: ['all', 'followed', 'follower', 'none'] }).notNull().default('all'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('push_subscriptions_session_idx').on(t.sessionId), index('push_subscriptions_user_idx').on(t.userId)],
)

/**
 * The Web Push outbox: one row per notification and subscription, written by a trigger on
 * `notifications` in the notification's own transaction (migration 0019), so nothing created is
 * lost whatever process, host or command created it. A sender claims due rows by moving
 * `next_attempt_at` past a lease and stamping `claim` (delivery/outbox.ts); a sent row is deleted.
 */
export const pushDeliveries = sqliteTable(
  'push_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    subscriptionId: integer('subscription_id')
      .notNull()
      .references(() => pushSubscriptions.id, { onDelete: 'cascade' }),
    notificationId: integer('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at').notNull(),
    /** The sender that holds the row until `next_attempt_at` (a random token), or null. */
    claim: text('claim'),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('push_deliveries_due_idx').on(t.nextAttemptAt),
    index('push_deliveries_subscription_idx').on(t.subscriptionId),
    index('push_deliveries_notification_idx').on(t.notificationId),
  ],
)

/**
 * The mail outbox (delivery/mail.ts): rendered messages waiting for SMTP, retried with backoff.
 * The bodies hold single-use links, so they are kept only until the message is sent or given up
 * (then null); the row stays as the record `plaza admin mail` shows.
 */
export const mailOutbox = sqliteTable(
  'mail_outbox',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body'),
    htmlBody: text('html_body'),
    status: text('status', { enum: ['pending', 'sent', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When a pending message is next tried (or its claim's lease ends); null once sent or failed. */
    nextAttemptAt: integer('next_attempt_at'),
    claim: text('claim'),
    lastError: text('last_error'),
    /** A message whose link has expired is not worth sending: given up at this time. */
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    sentAt: integer('sent_at'),
  },
  (t) => [
    index('mail_outbox_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.nextAttemptAt} is not null`),
    index('mail_outbox_user_idx').on(t.userId),
  ],
)

/**
 * Single-use secrets mailed to a user: a password reset or an email verification. Only the
 * SHA-256 of the token is kept; `email` is the address it was mailed to (a verification proves that
 * one). Consumed by setting `used_at` in the transaction that acts on it.
 */
export const accountTokens = sqliteTable(
  'account_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['password_reset', 'verify_email'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    email: text('email').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('account_tokens_hash_idx').on(t.tokenHash), index('account_tokens_user_idx').on(t.userId, t.purpose)],
)

/**
 * A user's TOTP secret (RFC 6238). It has to be read back to check codes, so it cannot be hashed.
 * Two-factor login is on once `confirmed_at` is set; `last_step` is the newest time step a code was
 * accepted for, and only later steps are accepted, so no code works twice.
 */
export const totpCredentials = sqliteTable('totp_credentials', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text('secret').notNull(),
  confirmedAt: integer('confirmed_at'),
  lastStep: integer('last_step').notNull().default(0),
  createdAt: integer('created_at').notNull(),
})

/** One-time recovery codes for two-factor login, SHA-256 hashed; a used one keeps its row with `used_at`. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('recovery_codes_user_hash_idx').on(t.userId, t.codeHash)],
)

/**
 * The second step of a login with two-factor on: the password was right, and this short-lived
 * token (hashed) stands for it until a code is given. Counts wrong codes; used or expired ones are
 * refused, and deleted at the user's next login.
 */
export const loginChallenges = sqliteTable(
  'login_challenges',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('login_challenges_hash_idx').on(t.tokenHash), index('login_challenges_user_idx').on(t.userId)],
)
