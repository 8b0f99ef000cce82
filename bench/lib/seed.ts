/**
 * Seeds a Plaza data directory with a synthetic social network, fast: the migrations create the
 * schema (through `openDatabase`, as the server would), then rows go straight into SQLite with the
 * synchronous `libsql` driver, prepared statements and large transactions, secondary indexes and
 * the FTS triggers dropped during the load and rebuilt once at the end (a sorted index build and one
 * FTS pass are many times faster than maintaining them row by row).
 *
 * Deterministic for a given seed: the same options give the same network and the same tokens.
 * Counters (followers, following, posts, likes, comments, hashtag posts) are computed while
 * generating and written with the rows; `verifyNetwork` checks them against the rows with SQL.
 *
 *   import { seedNetwork } from '../bench/lib/seed.js'
 *   const network = await seedNetwork(dir, { users: 200, posts: 2000 })
 *   network.tokenFor(1) // a live bearer token for user 1
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'libsql'
import { hashPassword } from '../../src/server/auth/passwords.js'
import { hashToken, SESSION_TTL_MS } from '../../src/server/auth/sessions.js'
import { DEFAULT_FANOUT_MAX_FOLLOWERS, TIMELINE_CAP } from '../../src/server/domain/timelines.js'

export interface SeedOptions {
  users: number
  posts: number
  /** Follow edges; default 125 per user (capped by what the network can hold). */
  follows?: number
  /** Default 2 per post. */
  likes?: number
  /** Default 0.2 per post. */
  comments?: number
  /** PRNG seed; the same seed gives the same network and tokens. */
  seed?: number
  /** The seeding clock (Unix ms); posts span the year before it. Default Date.now(). */
  now?: number
  /** Progress lines (stderr by default); pass () => {} for silence. */
  log?: (line: string) => void
}

export interface NetworkCounts {
  users: number
  /** Issue 49's features: private accounts (and their pending follow requests), replies among the comments, posts with mentions, carousels. */
  privateUsers?: number
  followRequests?: number
  replies?: number
  mentionPosts?: number
  carousels?: number
  follows: number
  posts: number
  publicPosts: number
  likes: number
  comments: number
  notifications: number
  hashtags: number
  /** Public posts whose text has the word `coffee`, for checking the FTS index. */
  coffeePosts: number
}

/** What `bench-network.json` in the data directory records, so a seeded directory can be reused. */
export interface NetworkManifest {
  version: 1
  options: { users: number; posts: number; follows: number; likes: number; comments: number; seed: number; now: number }
  counts: NetworkCounts
  seedingSeconds: number
  phases: Record<string, number>
}

export interface SeededNetwork {
  dir: string
  dbFile: string
  manifest: NetworkManifest
  /** True when an existing seeded directory was reused. */
  reused: boolean
  /** The plain bearer token of a user's session (only its SHA-256 is stored, as the server does). */
  tokenFor(userId: number): string
  password: string
}

export const MANIFEST = 'bench-network.json'
const PASSWORD = 'bench-password'
const SESSION_LIFETIME_MS = Math.max(SESSION_TTL_MS, 365 * 24 * 3600 * 1000)
/** Follow notifications are kept for the follows of the last 30 days only (older ones would be read and paged away). */
const FOLLOW_NOTIFICATION_WINDOW_MS = 30 * 24 * 3600 * 1000
const DAY = 24 * 3600 * 1000

/** A user's deterministic session token, in the server's format (`plz_` + 32 bytes base64url). */
export function benchToken(seed: number, userId: number): string {
  return 'plz_' + createHash('sha256').update(`plaza-bench:${seed}:${userId}`).digest('base64url')
}

export function readManifest(dir: string): NetworkManifest | null {
  const file = path.join(dir, MANIFEST)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as NetworkManifest) : null
}

/**
 * Seeds `dir` (which must hold no Plaza database yet, or one this function seeded with the same
 * options: then it is reused as is and its sessions are extended).
 */
export async function seedNetwork(dir: string, options: SeedOptions): Promise<SeededNetwork> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'))
  const resolved = {
    users: options.users,
    posts: options.posts,
    follows: options.follows ?? Math.round(options.users * 125),
    likes: options.likes ?? Math.round(options.posts * 2),
    comments: options.comments ?? Math.round(options.posts * 0.2),
    seed: options.seed ?? 1,
    now: options.now ?? Date.now(),
  }
  if (!(resolved.users >= 2) || !(resolved.posts >= 1)) throw new Error('seedNetwork: at least 2 users and 1 post')
  const dbFile = path.join(dir, 'plaza.db')
  const network = (manifest: NetworkManifest, reused: boolean): SeededNetwork => ({
    dir,
    dbFile,
    manifest,
    reused,
    password: PASSWORD,
    tokenFor: (userId) => benchToken(manifest.options.seed, userId),
  })

  const existing = readManifest(dir)
  if (existing) {
    const o = existing.options
    if (o.users !== resolved.users || o.posts !== resolved.posts || o.seed !== resolved.seed)
      throw new Error(`${dir} holds a network of ${o.users} users and ${o.posts} posts (seed ${o.seed}); use another directory`)
    // Sessions of a cached network stay live however old the cache is.
    const db = new Database(dbFile)
    db.prepare('UPDATE sessions SET expires_at = ? WHERE expires_at < ?').run(Date.now() + SESSION_LIFETIME_MS, Date.now() + SESSION_LIFETIME_MS / 2)
    db.close()
    return network(existing, true)
  }

  const started = performance.now()
  const phases: Record<string, number> = {}
  let phaseStart = started
  const phase = (name: string) => {
    const now = performance.now()
    phases[name] = Math.round(now - phaseStart) / 1000
    log(`  seed: ${name} ${phases[name].toFixed(1)} s`)
    phaseStart = now
  }

  // The schema, exactly as the server creates it, in a child process: when it exits, every lock its
  // connections held is gone, so the load below can take the database for itself.
  await migrateInChild(dir)
  const passwordHash = await hashPassword(PASSWORD)
  phase('migrations')

  const db = new Database(dbFile)
  db.exec('PRAGMA journal_mode = OFF')
  if ((db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n > 0)
    throw new Error(`${dbFile} already has users but no ${MANIFEST}: seed into an empty directory`)
  db.exec('PRAGMA synchronous = OFF')
  db.exec('PRAGMA locking_mode = EXCLUSIVE')
  db.exec('PRAGMA cache_size = -1000000')
  db.exec('PRAGMA foreign_keys = OFF')
  try {
    db.exec('PRAGMA threads = 2')
  } catch {}

  const BULK_TABLES = ['users', 'sessions', 'follows', 'posts', 'likes', 'comments', 'hashtags', 'post_hashtags', 'notifications', 'uploads', 'follow_requests']
  const inList = BULK_TABLES.map((t) => `'${t}'`).join(',')
  const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${inList})`).all() as Array<{ name: string; sql: string }>
  // Only the FTS triggers are dropped (the load fills the FTS tables in one pass); any other trigger keeps firing.
  const triggers = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name LIKE 'posts_fts_%' OR name LIKE 'users_fts_%')`).all() as Array<{ name: string; sql: string }>
  for (const index of indexes) db.exec(`DROP INDEX "${index.name}"`)
  for (const trigger of triggers) db.exec(`DROP TRIGGER "${trigger.name}"`)

  const rng = mulberry32(resolved.seed)
  const { users: N, now } = resolved
  const counts: NetworkCounts = {
    users: N,
    follows: 0,
    posts: 0,
    publicPosts: 0,
    likes: 0,
    comments: 0,
    notifications: 0,
    hashtags: 0,
    coffeePosts: 0,
    privateUsers: 0,
    followRequests: 0,
    replies: 0,
    mentionPosts: 0,
    carousels: 0,
  }
  // Issue 49's features draw from a generator of their own, so the rest of the network is what the
  // same seed always made (the same follows, posts, likes and comments as before them).
  const rng49 = mulberry32(resolved.seed ^ 0x49)
  const notes = new NotificationBuffer()

  // Users: joined over the two years before `now`, in id order. Popularity ranks are a random permutation.
  const userCreated = new Float64Array(N + 1)
  const popularityRank = shuffledIds(N, rng) // rank r -> user id
  const rankOf = new Int32Array(N + 1)
  for (let r = 0; r < N; r++) rankOf[popularityRank[r]] = r
  const insertUser = db.prepare(
    'INSERT INTO users (id, username, email, password_hash, full_name, bio, avatar, is_verified, followers_count, following_count, posts_count, created_at) VALUES (?, ?, ?, ?, ?, ?, \'\', ?, 0, 0, 0, ?)',
  )
  const insertSession = db.prepare('INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)')
  const handles: string[] = ['']
  transaction(db, () => {
    for (let id = 1; id <= N; id++) {
      const created = now - 2 * 365 * DAY + Math.floor(((id - 1) / N) * (2 * 365 - 1) * DAY)
      userCreated[id] = created
      const first = pick(FIRST_NAMES, rng)
      const last = pick(LAST_NAMES, rng)
      // A few handles start with a hobby word, so user search has something to find.
      const handle = rng() < 0.01 ? `${pick(HOBBIES, rng)}_${first.toLowerCase()}${id}` : `${first.toLowerCase()}_${last.toLowerCase()}${id}`
      const bio = rng() < 0.5 ? `${pick(HOBBIES, rng)} and ${pick(HOBBIES, rng)}` : ''
      handles.push(handle)
      insertUser.run(id, handle, `${handle}@example.com`, passwordHash, `${first} ${last}`, bio, rankOf[id] < N / 100 ? 1 : 0, created)
      insertSession.run(id, hashToken(benchToken(resolved.seed, id)), now, now + SESSION_LIFETIME_MS)
    }
  })
  // About 3% of the accounts are private (none of the most followed: those are public figures).
  const isPrivate = new Uint8Array(N + 1)
  const makePrivate = db.prepare('UPDATE users SET is_private = 1 WHERE id = ?')
  transaction(db, () => {
    for (let id = 1; id <= N; id++) {
      if (rankOf[id] >= N / 100 && rng49() < 0.03) {
        isPrivate[id] = 1
        makePrivate.run(id)
        counts.privateUsers!++
      }
    }
  })
  phase(`users and sessions (${N}, ${counts.privateUsers} private)`)

  // Follows: most users follow 100-200 accounts, some few, some many; targets are drawn 70% from
  // a steep power law over popularity (a handful of accounts end up followed by most users), 30% uniformly.
  const followers = new Int32Array(N + 1)
  const following = new Int32Array(N + 1)
  const wanted = new Int32Array(N + 1)
  let wantedTotal = 0
  for (let id = 1; id <= N; id++) {
    const u = rng()
    const f = u < 0.7 ? 100 + Math.floor(rng() * 101) : u < 0.95 ? 5 + Math.floor(rng() * 56) : 200 + Math.floor(rng() * 401)
    wanted[id] = f
    wantedTotal += f
  }
  const followScale = resolved.follows / wantedTotal
  const insertFollow = db.prepare('INSERT INTO follows (follower_id, following_id, created_at) VALUES (?, ?, ?)')
  const chosen = new Set<number>()
  // The graph stays in memory (compressed rows: the accounts of follower a are followTargets[followStart[a] .. followStart[a + 1]]) for the timelines.
  const followStart = new Int32Array(N + 2)
  let followTargets = new Int32Array(Math.ceil(resolved.follows * 1.05) + N)
  let batch = 0
  db.exec('BEGIN')
  for (let a = 1; a <= N; a++) {
    const k = Math.min(N - 1, Math.round(wanted[a] * followScale))
    const targets = k > (N - 1) / 3 ? distinctByShuffle(N, k, a, rng) : distinctBySampling(N, k, a, chosen, rng, () => {
      if (rng() < 0.7) return popularityRank[Math.min(N - 1, Math.floor(N * rng() ** 3))]
      return 1 + Math.floor(rng() * N)
    })
    for (const b of targets) {
      const since = Math.max(userCreated[a], userCreated[b])
      const at = since + Math.floor(rng() * (now - since))
      insertFollow.run(a, b, at)
      followers[b]++
      following[a]++
      if (at > now - FOLLOW_NOTIFICATION_WINDOW_MS) notes.push(b, a, NOTE_FOLLOW, 0, at)
    }
    followStart[a] = counts.follows
    if (counts.follows + targets.length > followTargets.length) {
      const grown = new Int32Array(Math.ceil((counts.follows + targets.length) * 1.5))
      grown.set(followTargets)
      followTargets = grown
    }
    followTargets.set(targets, counts.follows)
    counts.follows += targets.length
    followStart[a + 1] = counts.follows
    if ((batch += targets.length) > 500_000) {
      db.exec('COMMIT; BEGIN')
      batch = 0
    }
  }
  db.exec('COMMIT')
  phase(`follows (${counts.follows})`)

  /** Whether `a` follows `b`: a binary search of a's targets (kept ascending). */
  const followsUser = (a: number, b: number): boolean => {
    let lo = followStart[a]
    let hi = followStart[a + 1] - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (followTargets[mid] === b) return true
      if (followTargets[mid] < b) lo = mid + 1
      else hi = mid - 1
    }
    return false
  }
  // Two pending requests to follow each private account, from accounts that do not follow it, each
  // with the owner's follow_request notification (its id set on the request once notifications are in).
  const insertRequest = db.prepare('INSERT INTO follow_requests (requester_id, target_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  transaction(db, () => {
    for (let id = 1; id <= N; id++) {
      if (!isPrivate[id]) continue
      for (let k = 0; k < 2; k++) {
        const requester = 1 + Math.floor(rng49() * N)
        if (requester === id || followsUser(requester, id)) continue
        const at = now - Math.floor(rng49() * 20 * DAY)
        if (insertRequest.run(requester, id, at).changes === 0) continue
        notes.push(id, requester, NOTE_FOLLOW_REQUEST, 0, at)
        counts.followRequests!++
      }
    }
  })
  phase(`follow requests (${counts.followRequests})`)

  // Posts: one every (year / posts), authors half uniform, half weighted to the popular.
  const P = resolved.posts
  const author = new Int32Array(P + 1)
  const postCreated = new Float64Array(P + 1)
  const postPublic = new Uint8Array(P + 1)
  const weight = new Float64Array(P + 1)
  const postsOf = new Int32Array(N + 1)
  let weightTotal = 0
  for (let p = 1; p <= P; p++) {
    let a = rng() < 0.5 ? 1 + Math.floor(rng() * N) : popularityRank[Math.floor(N * rng() ** 2)]
    postCreated[p] = now - 365 * DAY + Math.floor(((p - 1) / P) * 365 * DAY) + 1
    // Nobody posts before they joined: take the newest account that existed then, if need be.
    if (userCreated[a] > postCreated[p]) a = 1 + Math.floor(rng() * Math.max(1, Math.floor(((postCreated[p] - userCreated[1]) / (2 * 365 * DAY)) * N)))
    author[p] = a
    postsOf[a]++
    postPublic[p] = rng() < 0.92 ? 1 : 0
    weight[p] = Math.sqrt(followers[a] + 10) * Math.min(50, rng() ** -0.6)
    weightTotal += weight[p]
  }
  const likesOf = allocate(resolved.likes, weight, weightTotal, N)
  const commentWeight = weight.map((w) => w * (0.5 + rng()))
  const commentsOf = allocate(resolved.comments, commentWeight, commentWeight.reduce((s, w) => s + w, 0), N)

  const tagIds = new Map<string, number>()
  const tagPublicPosts: number[] = []
  const insertPost = db.prepare('INSERT INTO posts (id, user_id, content, image, media, mentions, is_public, likes_count, comments_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
  const BENCH_BLURHASH = 'LEHV6nWB2yk8pyo0adR*.7kCMdnj'
  const insertUpload = db.prepare("INSERT INTO uploads (user_id, kind, path, mime, size, width, height, blurhash, created_at) VALUES (?, 'posts', ?, 'image/jpeg', ?, ?, ?, ?, ?)")
  const setRepliesCount = db.prepare('UPDATE comments SET replies_count = ? WHERE id = ?')
  let commentId = 0
  const insertPostTag = db.prepare('INSERT INTO post_hashtags (post_id, hashtag_id) VALUES (?, ?)')
  const insertLike = db.prepare('INSERT INTO likes (post_id, user_id, created_at) VALUES (?, ?, ?)')
  const insertComment = db.prepare('INSERT INTO comments (id, post_id, user_id, content, image, created_at, parent_id) VALUES (?, ?, ?, ?, \'\', ?, ?)')
  const picked = new Set<number>()
  const uniform = () => 1 + Math.floor(rng() * N)
  batch = 0
  db.exec('BEGIN')
  for (let p = 1; p <= P; p++) {
    const written = postText(rng)
    const { tags } = written
    let { text, coffee } = written
    const a = author[p]
    const created = postCreated[p]
    const likers = likesOf[p] > (N - 1) / 3 ? distinctByShuffle(N, likesOf[p], 0, rng) : distinctBySampling(N, likesOf[p], 0, picked, rng, uniform)
    // About 5% of posts name one or two accounts (@handle at the end), told when they may see the post.
    let mentions: string | null = null
    if (rng49() < 0.05) {
      const named: Array<[number, string, number, number]> = []
      for (let k = rng49() < 0.7 ? 1 : 2; k > 0; k--) {
        const m = 1 + Math.floor(rng49() * N)
        if (m === a || named.some((n) => n[0] === m)) continue
        const start = text.length + 1
        text += ` @${handles[m]}`
        named.push([m, handles[m], start, text.length])
        // A handle that starts with a hobby word adds that word to the text's search terms.
        if (handles[m].startsWith('coffee_')) coffee = true
        if ((postPublic[p] && !isPrivate[a]) || followsUser(m, a)) notes.push(m, a, NOTE_MENTION, p, created)
      }
      if (named.length > 0) {
        mentions = JSON.stringify(named)
        counts.mentionPosts!++
      }
    }
    // About 2% of posts are carousels of 2 to 10 images, each with alt text, uploaded by the author.
    let image = ''
    let media: string | null = null
    if (rng49() < 0.02) {
      // Each item as posts are written (post-media.ts): the path, its alt text, what the upload recorded.
      const items: Array<[string, string, number, number, string, null, string]> = []
      for (let k = 0, n = 2 + Math.floor(rng49() * 9); k < n; k++) {
        const path = `uploads/posts/s${resolved.seed}p${String(p).padStart(8, '0')}m${k}.jpg`
        const size = 150_000 + Math.floor(rng49() * 300_000)
        const height = 810 + Math.floor(rng49() * 540)
        insertUpload.run(a, path, size, 1080, height, BENCH_BLURHASH, created)
        items.push([path, `${pick(WORDS, rng49)} ${pick(WORDS, rng49)}, photo ${k + 1}`, 1080, height, BENCH_BLURHASH, null, 'image/jpeg'])
      }
      image = items[0][0]
      media = JSON.stringify(items)
      counts.carousels!++
    }
    insertPost.run(p, a, text, image, media, mentions, postPublic[p], likers.length, commentsOf[p], created)
    counts.posts++
    if (postPublic[p]) {
      counts.publicPosts++
      if (coffee) counts.coffeePosts++
    }
    for (const tag of tags) {
      let id = tagIds.get(tag)
      if (id === undefined) {
        id = tagIds.size + 1
        tagIds.set(tag, id)
        tagPublicPosts.push(0)
      }
      // Counted when anyone may see the post: public, by an account that is not private.
      if (postPublic[p] && !isPrivate[a]) tagPublicPosts[id - 1]++
      insertPostTag.run(p, id)
    }
    for (const u of likers) {
      const at = created + Math.floor(rng() * (now - created))
      insertLike.run(p, u, at)
      notes.push(a, u, NOTE_LIKE, p, at)
    }
    counts.likes += likers.length
    const times: number[] = []
    for (let c = 0; c < commentsOf[p]; c++) times.push(created + Math.floor(rng() * (now - created)))
    times.sort((x, y) => x - y)
    // About 30% of a post's later comments reply to one of its earlier top-level comments (one level,
    // as the API makes them): the parent's author is told (reply), the post's author as for any comment.
    const heads: Array<[id: number, author: number]> = []
    const replies = new Map<number, number>()
    for (const at of times) {
      const u = uniform()
      const head = heads.length > 0 && rng49() < 0.3 ? heads[Math.floor(rng49() * heads.length)] : null
      insertComment.run(++commentId, p, u, commentText(rng), at, head ? head[0] : null)
      if (head) {
        replies.set(head[0], (replies.get(head[0]) ?? 0) + 1)
        notes.push(head[1], u, NOTE_REPLY, p, at)
        counts.replies!++
        if (head[1] !== a) notes.push(a, u, NOTE_COMMENT, p, at)
      } else {
        heads.push([commentId, u])
        notes.push(a, u, NOTE_COMMENT, p, at)
      }
    }
    for (const [id, n] of replies) setRepliesCount.run(n, id)
    counts.comments += times.length
    if ((batch += 1 + likers.length + times.length) > 500_000) {
      db.exec('COMMIT; BEGIN')
      batch = 0
    }
  }
  db.exec('COMMIT')
  const insertTag = db.prepare('INSERT INTO hashtags (id, tag, posts_count) VALUES (?, ?, ?)')
  transaction(db, () => {
    for (const [tag, id] of tagIds) insertTag.run(id, tag, tagPublicPosts[id - 1])
  })
  counts.hashtags = tagIds.size
  phase(`posts (${counts.posts}), likes (${counts.likes}), comments (${counts.comments}), hashtags (${counts.hashtags})`)

  // Profile counters, then notifications in time order (their ids grow with time, as the list's order assumes).
  const setCounters = db.prepare('UPDATE users SET followers_count = ?, following_count = ?, posts_count = ? WHERE id = ?')
  transaction(db, () => {
    for (let id = 1; id <= N; id++) setCounters.run(followers[id], following[id], postsOf[id], id)
  })
  const insertNote = db.prepare('INSERT INTO notifications (user_id, actor_id, type, post_id, is_read, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  const order = notes.order()
  const types = ['follow', 'like', 'comment', 'mention', 'reply', 'follow_request']
  db.exec('BEGIN')
  for (let i = 0; i < order.length; i++) {
    const n = order[i]
    if (notes.user[n] === notes.actor[n]) continue
    const at = notes.at[n]
    insertNote.run(notes.user[n], notes.actor[n], types[notes.type[n]], notes.post[n] || null, at < now - 7 * DAY ? 1 : 0, at)
    counts.notifications++
    if (i % 500_000 === 499_999) db.exec('COMMIT; BEGIN')
  }
  db.exec('COMMIT')
  phase(`counters, notifications (${counts.notifications})`)

  for (const index of indexes) db.exec(index.sql)
  phase(`indexes (${indexes.length})`)
  // Each follow request keeps its notification's id (its approval or denial deletes it by key).
  db.exec(`UPDATE follow_requests SET notification_id = (SELECT n.id FROM notifications n
    WHERE n.user_id = follow_requests.target_id AND n.actor_id = follow_requests.requester_id AND n.type = 'follow_request')`)
  db.exec('INSERT INTO posts_fts(rowid, content) SELECT id, content FROM posts WHERE is_public = 1')
  db.exec('INSERT INTO users_fts(rowid, username, full_name) SELECT id, username, full_name FROM users')
  for (const trigger of triggers) db.exec(trigger.sql)
  db.exec("INSERT INTO posts_fts(posts_fts) VALUES ('optimize')")
  db.exec("INSERT INTO users_fts(users_fts) VALUES ('optimize')")
  phase('full-text indexes')
  if (hasColumn(db, 'users', 'notifications_read_upto')) {
    // The unread counters were kept by the insert trigger (migration 0016); the read-up-to marks are
    // set as the migration sets them: below each user's oldest unread notification, else at their newest.
    db.exec(`UPDATE users SET notifications_read_upto = coalesce(
      (SELECT min(n.id) - 1 FROM notifications n WHERE n.user_id = users.id AND n.is_read = 0),
      (SELECT max(n.id) FROM notifications n WHERE n.user_id = users.id), 0)`)
    phase('notification read-up-to marks')
  }
  if (hasTable(db, 'timelines')) {
    const rows = fillTimelines(db, { users: N, followStart, followTargets, followers, author, postCreated, postsOf }, log)
    phase(`timelines (${rows} entries)`)
  }
  // The timelines above hold every seeded post: the deferred fan-out (migration 0006) starts after them.
  if (hasTable(db, 'timeline_fanout')) db.exec('UPDATE timeline_fanout SET post_id = (SELECT coalesce(max(id), 0) FROM posts)')
  // The server runs ANALYZE on a database without statistics when it opens it; done here, it is
  // done once for a cached network instead of at the first server start.
  db.exec('ANALYZE')
  phase('analyze')
  db.exec('PRAGMA locking_mode = NORMAL')
  db.exec('PRAGMA journal_mode = WAL')
  db.close()

  const manifest: NetworkManifest = {
    version: 1,
    options: resolved,
    counts,
    seedingSeconds: Math.round(performance.now() - started) / 1000,
    phases,
  }
  writeFileSync(path.join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 })
  return network(manifest, false)
}

export interface VerifyReport {
  ok: boolean
  lines: string[]
}

/**
 * Checks every stored counter against the rows it counts, with SQL: sums first (cheap, and they
 * name the totals), then row by row (a per-row mismatch can hide in equal sums).
 */
export function verifyNetwork(dbFile: string, expected?: NetworkCounts): VerifyReport {
  const db = new Database(dbFile, { readonly: true })
  const one = (sql: string) => Object.values(db.prepare(sql).get() as Record<string, number>)[0]
  const lines: string[] = []
  let ok = true
  const check = (label: string, actual: number, want: number) => {
    const good = actual === want
    ok &&= good
    lines.push(`${good ? 'ok  ' : 'FAIL'} ${label}: ${actual.toLocaleString('en')}${good ? '' : ` (expected ${want.toLocaleString('en')})`}`)
  }
  const follows = one('SELECT count(*) FROM follows')
  const posts = one('SELECT count(*) FROM posts')
  const likes = one('SELECT count(*) FROM likes')
  const comments = one('SELECT count(*) FROM comments')
  check('sum(users.followers_count) = follows rows', one('SELECT sum(followers_count) FROM users'), follows)
  check('sum(users.following_count) = follows rows', one('SELECT sum(following_count) FROM users'), follows)
  check('sum(users.posts_count) = posts rows', one('SELECT sum(posts_count) FROM users'), posts)
  check('sum(posts.likes_count) = likes rows', one('SELECT sum(likes_count) FROM posts'), likes)
  check('sum(posts.comments_count) = comments rows', one('SELECT sum(comments_count) FROM posts'), comments)
  check(
    'users whose followers/following/posts count differs from their rows',
    one(`SELECT count(*) FROM users u WHERE followers_count != (SELECT count(*) FROM follows WHERE following_id = u.id)
           OR following_count != (SELECT count(*) FROM follows WHERE follower_id = u.id)
           OR posts_count != (SELECT count(*) FROM posts WHERE user_id = u.id)`),
    0,
  )
  check(
    'posts whose likes/comments count differs from their rows',
    one(`SELECT count(*) FROM posts p WHERE likes_count != (SELECT count(*) FROM likes WHERE post_id = p.id)
           OR comments_count != (SELECT count(*) FROM comments WHERE post_id = p.id)`),
    0,
  )
  // Since issue 49 a tag counts the posts anyone may see: public, by an account that is not private.
  const listed = hasColumn(db, 'users', 'is_private') ? 'AND p.user_id NOT IN (SELECT id FROM users WHERE is_private = 1)' : ''
  check(
    'hashtags whose posts_count differs from their public posts',
    one(`SELECT count(*) FROM hashtags h WHERE posts_count != (SELECT count(*) FROM post_hashtags ph JOIN posts p ON p.id = ph.post_id WHERE ph.hashtag_id = h.id AND p.is_public = 1 ${listed})`),
    0,
  )
  if (hasColumn(db, 'comments', 'replies_count')) {
    check(
      'comments whose replies_count differs from their replies, or replies under a reply',
      one(`SELECT count(*) FROM comments c WHERE replies_count != (SELECT count(*) FROM comments r WHERE r.post_id = c.post_id AND r.parent_id = c.id)
             OR (c.parent_id IS NOT NULL AND c.replies_count != 0)`),
      0,
    )
  }
  if (hasColumn(db, 'users', 'notifications_unread')) {
    check('sum(users.notifications_unread) = unread notification rows', one('SELECT sum(notifications_unread) FROM users'), one('SELECT count(*) FROM notifications WHERE is_read = 0'))
    check(
      'users whose unread count differs from their rows, or with an unread notification at or below their read-up-to mark',
      one(`SELECT count(*) FROM users u WHERE notifications_unread != (SELECT count(*) FROM notifications n WHERE n.user_id = u.id AND n.is_read = 0)
             OR EXISTS (SELECT 1 FROM notifications n WHERE n.user_id = u.id AND n.id <= u.notifications_read_upto AND n.is_read = 0)`),
      0,
    )
  }
  const publicPosts = one('SELECT count(*) FROM posts WHERE is_public = 1')
  check('posts_fts rows (public posts only)', one('SELECT count(*) FROM posts_fts_docsize'), publicPosts)
  check('users_fts rows', one('SELECT count(*) FROM users_fts_docsize'), one('SELECT count(*) FROM users'))
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'timelines'").get()) {
    // A sample of feeds, first page, from the timelines (merged with the followed pulled authors and
    // the posts still waiting for their fan-out, as domain/timelines.ts reads them) against the
    // direct query over follows and posts.
    const pending = hasTable(db, 'timeline_fanout')
      ? `UNION
        SELECT p.created_at, p.id FROM posts p WHERE p.id > (SELECT post_id FROM timeline_fanout)
          AND (p.user_id = ?1 OR EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = ?1 AND f.following_id = p.user_id))`
      : ''
    const direct = db.prepare(`SELECT id FROM posts WHERE user_id IN (SELECT following_id FROM follows WHERE follower_id = ?1 UNION SELECT ?1)
                               ORDER BY created_at DESC, id DESC LIMIT 20`)
    const timeline = db.prepare(`
      SELECT post_id AS id FROM (
        SELECT created_at, post_id FROM (SELECT created_at, post_id FROM timelines WHERE user_id = ?1 ORDER BY created_at DESC, post_id DESC LIMIT 20)
        UNION
        SELECT created_at, post_id FROM (
          SELECT p.created_at AS created_at, p.id AS post_id FROM timeline_pulled_authors pa
          CROSS JOIN follows f ON f.follower_id = ?1 AND f.following_id = pa.user_id
          JOIN posts p ON p.id IN (SELECT p2.id FROM posts p2 WHERE p2.user_id = pa.user_id ORDER BY p2.created_at DESC, p2.id DESC LIMIT 20))
        ${pending}
        ORDER BY created_at DESC, post_id DESC LIMIT 20)`)
    const users = one('SELECT max(id) FROM users')
    let differ = 0
    for (let i = 0; i < 200; i++) {
      const u = 1 + Math.floor(((i * 7919) % 200) * (users / 200)) + (i % 7)
      const ids = (s: typeof direct) => (s.all(u) as Array<{ id: number }>).map((r) => r.id).join(',')
      if (ids(direct) !== ids(timeline)) differ++
    }
    check('sampled feeds (200) whose timeline page differs from the direct query', differ, 0)
  }
  if (expected) {
    check('posts_fts MATCH coffee = public posts with the word', one(`SELECT count(*) FROM posts_fts WHERE posts_fts MATCH 'coffee'`), expected.coffeePosts)
    check('follows rows as generated', follows, expected.follows)
    check('likes rows as generated', likes, expected.likes)
  }
  db.close()
  return { ok, lines }
}

function hasColumn(db: Database.Database, table: string, column: string): boolean {
  return (db.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = ?`).all(table, column) as unknown[]).length > 0
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined
}

interface Graph {
  users: number
  followStart: Int32Array
  followTargets: Int32Array
  followers: Int32Array
  /** Post id -> author; ids grow with created_at, so "newest" is "highest id". */
  author: Int32Array
  postCreated: Float64Array
  postsOf: Int32Array
}

/**
 * Home timelines (migration 0003, domain/timelines.ts) as a grown server would hold them: accounts
 * with more than DEFAULT_FANOUT_MAX_FOLLOWERS followers are pulled authors (read at feed time,
 * never fanned out to followers); a timeline holds the newest posts of its owner and of the
 * non-pulled accounts they follow, at most TIMELINE_CAP; one that had more records its floor
 * (the time of the first post it leaves out), as the migration's backfill does. Merged in memory
 * (a heap over each followee's posts, newest first), written one JSON array per user.
 */
function fillTimelines(db: Database.Database, g: Graph, log: (line: string) => void): number {
  const N = g.users
  const pulled = new Uint8Array(N + 1)
  const insertPulled = db.prepare('INSERT INTO timeline_pulled_authors (user_id) VALUES (?)')
  transaction(db, () => {
    for (let id = 1; id <= N; id++) if (g.followers[id] > DEFAULT_FANOUT_MAX_FOLLOWERS) (pulled[id] = 1), insertPulled.run(id)
  })
  // Each author's posts, ascending ids, in compressed rows.
  const postStart = new Int32Array(N + 2)
  for (let id = 1; id <= N; id++) postStart[id + 1] = postStart[id] + g.postsOf[id]
  const fillAt = postStart.slice()
  const postsByAuthor = new Int32Array(g.author.length)
  for (let p = 1; p < g.author.length; p++) postsByAuthor[fillAt[g.author[p]]++] = p

  const keep = TIMELINE_CAP + 1
  const insert = db.prepare("INSERT INTO timelines (user_id, created_at, post_id) SELECT ?, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]') FROM json_each(?) j")
  const insertFloor = db.prepare('INSERT INTO timeline_floors (user_id, created_at) VALUES (?, ?)')
  // A max-heap of cursors (an index into postsByAuthor, moving down to each author's start).
  const cursor = new Int32Array(N + 1)
  const end = new Int32Array(N + 1)
  const picked = new Int32Array(keep)
  let rows = 0
  const started = performance.now()
  db.exec('BEGIN')
  for (let u = 1; u <= N; u++) {
    let size = 0
    const push = (author: number) => {
      if (g.postsOf[author] === 0) return
      cursor[size] = postStart[author + 1] - 1
      end[size] = postStart[author]
      let i = size++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (postsByAuthor[cursor[parent]] >= postsByAuthor[cursor[i]]) break
        swap(cursor, end, i, parent)
        i = parent
      }
    }
    push(u)
    for (let i = g.followStart[u]; i < g.followStart[u + 1]; i++) if (!pulled[g.followTargets[i]]) push(g.followTargets[i])
    let count = 0
    while (size > 0 && count < keep) {
      picked[count++] = postsByAuthor[cursor[0]]
      if (--cursor[0] < end[0]) {
        size--
        cursor[0] = cursor[size]
        end[0] = end[size]
      }
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let top = i
        if (l < size && postsByAuthor[cursor[l]] > postsByAuthor[cursor[top]]) top = l
        if (r < size && postsByAuthor[cursor[r]] > postsByAuthor[cursor[top]]) top = r
        if (top === i) break
        swap(cursor, end, i, top)
        i = top
      }
    }
    let kept = count
    if (count === keep) {
      // Full: the floor is the first post left out; everything at or below it goes (ties too, as trim does).
      const floor = g.postCreated[picked[keep - 1]]
      insertFloor.run(u, floor)
      while (kept > 0 && g.postCreated[picked[kept - 1]] <= floor) kept--
    }
    const entries: string[] = []
    for (let i = kept - 1; i >= 0; i--) entries.push(`[${g.postCreated[picked[i]]},${picked[i]}]`)
    if (kept > 0) insert.run(u, `[${entries.join(',')}]`)
    rows += kept
    if (u % 5000 === 0) {
      db.exec('COMMIT; BEGIN')
      if (u % 20000 === 0) log(`  seed: timelines of ${u} users, ${((performance.now() - started) / 1000).toFixed(0)} s`)
    }
  }
  db.exec('COMMIT')
  return rows
}

function swap(a: Int32Array, b: Int32Array, i: number, j: number): void {
  let t = a[i]
  a[i] = a[j]
  a[j] = t
  t = b[i]
  b[i] = b[j]
  b[j] = t
}

const CLIENT_MODULE = fileURLToPath(new URL('../../src/server/db/client.ts', import.meta.url))

/** Applies the migrations with the server's own `openDatabase`, in a child process (tsx). */
function migrateInChild(dir: string): Promise<void> {
  const script = `const { openDatabase } = await import(${JSON.stringify('file://' + CLIENT_MODULE)}); (await openDatabase({ dataDir: ${JSON.stringify(dir)} })).close()`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`migrations failed (exit ${code})`))))
  })
}

function transaction(db: Database.Database, fn: () => void): void {
  db.exec('BEGIN')
  fn()
  db.exec('COMMIT')
}

/** A small, fast, seedable PRNG (mulberry32): uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pick<T>(items: readonly T[], rng: () => number): T {
  return items[Math.floor(rng() * items.length)]
}

function shuffledIds(n: number, rng: () => number): Int32Array {
  const ids = new Int32Array(n)
  for (let i = 0; i < n; i++) ids[i] = i + 1
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    const t = ids[i]
    ids[i] = ids[j]
    ids[j] = t
  }
  return ids
}

/**
 * k distinct ids in 1..n other than `except`, ascending, drawn from `draw`; when the draw is too
 * concentrated to finish (tiny networks), the rest is drawn uniformly. For k up to about n / 3.
 */
function distinctBySampling(n: number, k: number, except: number, seen: Set<number>, rng: () => number, draw: () => number): number[] {
  seen.clear()
  let misses = 0
  while (seen.size < k) {
    const id = misses > 20 * k + 100 ? 1 + Math.floor(rng() * n) : draw()
    if (id !== except && !seen.has(id)) seen.add(id)
    else misses++
  }
  return [...seen].sort((x, y) => x - y)
}

/** k distinct ids in 1..n other than `except`, ascending, by a partial shuffle (for k near n). */
function distinctByShuffle(n: number, k: number, except: number, rng: () => number): number[] {
  const ids: number[] = []
  for (let id = 1; id <= n; id++) if (id !== except) ids.push(id)
  k = Math.min(k, ids.length)
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rng() * (ids.length - i))
    const t = ids[i]
    ids[i] = ids[j]
    ids[j] = t
  }
  return ids.slice(0, k).sort((x, y) => x - y)
}

/** Splits `total` over the items in proportion to `weight` (cumulative rounding: the parts sum to total), each capped at `cap`. */
function allocate(total: number, weight: Float64Array, weightTotal: number, cap: number): Int32Array {
  const parts = new Int32Array(weight.length)
  let cumulative = 0
  let given = 0
  for (let i = 1; i < weight.length; i++) {
    cumulative += (total * weight[i]) / weightTotal
    const upTo = Math.round(cumulative)
    parts[i] = Math.min(cap, upTo - given)
    given = upTo
  }
  return parts
}

const NOTE_FOLLOW = 0
const NOTE_LIKE = 1
const NOTE_COMMENT = 2
const NOTE_MENTION = 3
const NOTE_REPLY = 4
const NOTE_FOLLOW_REQUEST = 5

/** Notification events in growable typed arrays, sorted by time before insertion. */
class NotificationBuffer {
  user = new Int32Array(1 << 16)
  actor = new Int32Array(1 << 16)
  post = new Int32Array(1 << 16)
  type = new Uint8Array(1 << 16)
  at = new Float64Array(1 << 16)
  length = 0

  push(user: number, actor: number, type: number, post: number, at: number): void {
    if (this.length === this.user.length) this.grow()
    const i = this.length++
    this.user[i] = user
    this.actor[i] = actor
    this.type[i] = type
    this.post[i] = post
    this.at[i] = at
  }

  order(): Uint32Array {
    const order = new Uint32Array(this.length)
    for (let i = 0; i < this.length; i++) order[i] = i
    const at = this.at
    return order.sort((x, y) => at[x] - at[y] || x - y)
  }

  private grow(): void {
    const size = this.user.length * 2
    const grow = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(size)
      b.set(a)
      return b
    }
    this.user = grow(this.user, Int32Array)
    this.actor = grow(this.actor, Int32Array)
    this.post = grow(this.post, Int32Array)
    this.type = grow(this.type, Uint8Array)
    this.at = grow(this.at, Float64Array)
  }
}

// Text: words drawn from a Zipf law over a small vocabulary ("the" the commonest, "coffee" about 1 post in 100).
/** The words of the seeded posts (exported for the benchmarks' search queries). */
export const WORDS = (
  'the a to and of i in it is you that for on my this with be so at just have me but not are was all your we can ' +
  'day what time like out one up get today now love new good got when about how if do more they people no from back ' +
  'know will some great really home go see still here going much think night first morning last make week best work ' +
  'life right way happy little world never need over want thanks year ready weekend after sun long city walk friends ' +
  'music again nice after school team game food book read photo beautiful summer rain light old place feel try season ' +
  'free start coffee dog cat tea run plan train sea park weather birthday garden kitchen market project idea window ' +
  'street bread dinner lunch breakfast movie song album trip beach mountain river cloud snow winter spring autumn ' +
  'bike code release bug deploy meeting office desk laptop phone camera paint draw write story chapter poem quiet ' +
  'loud early late fresh warm cold tired busy calm sunny cloudy windy bright dark sweet bitter green blue red yellow ' +
  'orange purple small big tall short soft hard fast slow simple strange funny lovely perfect favorite local family'
).split(' ')
const WORD_CDF = (() => {
  const cdf = new Float64Array(WORDS.length)
  let sum = 0
  for (let i = 0; i < WORDS.length; i++) cdf[i] = sum += 1 / (i + 1)
  for (let i = 0; i < WORDS.length; i++) cdf[i] /= sum
  return cdf
})()
const COFFEE = WORDS.indexOf('coffee')
export const TAGS = WORDS.slice(60).flatMap((w, i) => [w, `${w}${WORDS[60 + ((i * 7) % (WORDS.length - 60))]}`, `${w}life`, `${w}2026`])
const FIRST_NAMES = 'Ada Alan Ana Ben Bea Cleo Dan Eva Finn Gus Hana Ivan Jade Kai Lena Leo Maya Mia Nia Noah Omar Pia Quin Rosa Sam Tara Uma Vera Wes Yara Zoe'.split(' ')
const LAST_NAMES = 'Abbott Baker Chen Diaz Evans Fischer Garcia Hughes Ito Jensen Kaur Lopez Moreau Novak Okafor Park Quist Rossi Silva Tanaka Ueda Varga Wong Xu Young Zeller'.split(' ')
const HOBBIES = 'coffee climbing baking cycling chess jazz hiking photo running sketch garden vinyl'.split(' ')

function word(rng: () => number): number {
  const u = rng()
  let lo = 0
  let hi = WORD_CDF.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (WORD_CDF[mid] < u) lo = mid + 1
    else hi = mid
  }
  return lo
}

function postText(rng: () => number): { text: string; tags: string[]; coffee: boolean } {
  const n = 4 + Math.floor(rng() * 16)
  const parts: string[] = []
  let coffee = false
  for (let i = 0; i < n; i++) {
    const w = word(rng)
    if (w === COFFEE) coffee = true
    parts.push(WORDS[w])
  }
  parts[0] = parts[0][0].toUpperCase() + parts[0].slice(1)
  const tags: string[] = []
  if (rng() < 0.2) {
    const count = rng() < 0.7 ? 1 : 2
    for (let i = 0; i < count; i++) {
      // Tag popularity is Zipf-like too: squaring the draw favours the first tags.
      const tag = TAGS[Math.floor(rng() ** 2 * TAGS.length)]
      if (!tags.includes(tag)) tags.push(tag)
    }
  }
  for (const tag of tags) if (tag === 'coffee') coffee = true
  return { text: parts.join(' ') + '.' + tags.map((t) => ` #${t}`).join(''), tags, coffee }
}

function commentText(rng: () => number): string {
  const n = 2 + Math.floor(rng() * 8)
  const parts: string[] = []
  for (let i = 0; i < n; i++) parts.push(WORDS[word(rng)])
  return parts.join(' ')
}
