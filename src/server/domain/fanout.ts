/**
 * Deferred fan-out: a post is stored in a short transaction of its own (posts.ts) and written into
 * its followers' timelines afterwards, here, as Mastodon (Sidekiq) and GoToSocial (a worker queue)
 * do. Each timeline row is an insert into a random page of a large b-tree (tens of microseconds on
 * a big network): inside the post's transaction that held the one write lock for milliseconds per
 * post, and for a tenth of a second for an author with 10k followers.
 *
 * Post ids increase and commit in order (SQLite has one writer at a time), so the work left is
 * every post past one cursor (`timeline_fanout`). A slice is one write transaction that fans out
 * the next posts, a few milliseconds' worth (SliceBudget), and moves the cursor past them: the cursor moves
 * with the rows, so a slice that fails changes nothing, and processes sharing a database
 * (`plaza serve --workers N`) never fan out a post twice. Meanwhile the feed reads pending posts
 * from `posts` (timelines.ts), so its answers are exact whatever the backlog.
 */
import { eq, sql } from 'drizzle-orm'
import { writeTransaction, type Db, type ReadDb, type Tx } from '../db/client.js'
import { noWarm, type Warm } from '../db/warm.js'
import { prepared } from '../db/prepared.js'
import { posts, timelineBackfills, timelineFanout, users } from '../db/schema.js'
import type { Logger } from '../logger.js'
import { backfillPages, backfillPending, fanOutPost, nextBackfills } from './timelines.js'

/** How much one slice may do: it holds the write lock and (the write client is synchronous) the event loop. */
export interface SliceBudget {
  /** Timeline rows: a few milliseconds' worth where the timelines' pages are cached (1-20 µs a row). */
  rows: number
  /**
   * Milliseconds: where they are not (the machine's page cache smaller than the timelines), a row
   * can cost 50-150 µs, and the time bound keeps a slice short all the same.
   */
  ms: number
}

export const FANOUT_BUDGET: SliceBudget = { rows: 2000, ms: 5 }

/** How often a runner looks for posts another process stored (and retries after a failure). */
export const FANOUT_POLL_MS = 1000

/** How long closing a runner without a background loop (the embedded CLI) fans out what is pending. */
const CLOSE_DRAIN_MS = 1000

/** An error as a log line: a failed query's own message is its cause (drizzle's message is the whole SQL). */
function describe(error: unknown): string {
  return String((error as Error)?.cause ?? error)
}

/**
 * The most of a busy event loop the server's fan-out takes: after a slice of t ms a runner stands
 * back for (1 / share - 1) · t. A slice holds the loop (the write client is synchronous) and the
 * one write lock of every process, while requests are what someone waits for; the feed is exact
 * whatever the backlog, at the cost of at most one index range per followed account (timelines.ts
 * pendingIdsQuery). On the 1M-post network (bench/social.ts, post create, 2 processes), a share of
 * 1/2 answered 1,282-1,434 posts a second, 1/5 2,151, 1/8 2,811-3,111, and none 3,239; the backlog
 * a 5 s burst leaves grew from about 7,000 posts to 15,000, fanned out at full speed once it ends.
 *
 * It is the server's share, not each process's: the runners of `plaza serve --workers N` take
 * BUSY_SHARE / N each (FanoutOptions.processes), as they all take turns at the one write lock.
 * With each of 2 processes at 1/8, the fan-out held the lock up to a quarter of the time: alternated
 * A/B on 2026-11-24, post create 3,002 / 3,380 / 3,037 / 2,442 req/s that way, 3,258 / 3,260 /
 * 3,335 / 3,150 with each at 1/16, the backlogs left alike (12,753-17,925 posts).
 */
const BUSY_SHARE = 1 / 8

/** The longest the runner stands back for the rest of the event loop after a slice. */
const YIELD_MAX_MS = 100

/** Work of the rest of the event loop shorter than this between two slices counts as none. */
const BUSY_MS = 1

/**
 * With other processes on the database (`plaza serve --workers N`), even an idle loop leaves the
 * write lock free this long between two slices. A process waiting for the lock retries it every
 * millisecond (db/local-client.ts, whenUnlocked), and slices run back to back leave a gap of a few
 * microseconds: an idle process draining the backlog of a busy one would hold the lock nearly all
 * the time, and the busy one's requests would wait for it.
 */
export const LOCK_DOOR_MS = 2

/** Pending posts read per statement while a slice fills up. */
const READ_BATCH = 32

interface PendingPost {
  id: number
  user_id: number
  created_at: number
  followers_count: number
}

async function cursorOf(tx: Tx): Promise<number> {
  const row = await tx.get<{ post_id: number }>(sql`select post_id from ${timelineFanout} where id = 1`)
  return row!.post_id
}

/** The next pending posts after `cursor`, in id order, with their authors' follower counts. */
function nextPending(tx: Tx, cursor: number): Promise<PendingPost[]> {
  return tx.all<PendingPost>(sql`
    select p.id, p.user_id, p.created_at, u.followers_count from ${posts} p join ${users} u on u.id = p.user_id
    where p.id > ${cursor} order by p.id limit ${READ_BATCH}`)
}

/** Timeline rows a post's fan-out writes: its author's, and its followers' unless it is pulled. */
function rowsOf(post: PendingPost, maxFollowers: number): number {
  return post.followers_count > maxFollowers ? 1 : post.followers_count + 1
}

/**
 * One slice, in one write transaction: fans out the next pending posts in id order (at least one,
 * within `budget`: about its rows, at most its time, give or take one post) and moves the cursor
 * past them, then runs pending follow backfills (timelines.ts backfillPending; at least one) while
 * within `budget`'s time. Resolves to the number of posts still pending, plus one if backfills are
 * (at most; 0 exactly when nothing is).
 */
export async function fanOutPending(db: Db, maxFollowers: number, budget: SliceBudget): Promise<number> {
  return writeTransaction(db, async (tx) => {
    const started = performance.now()
    // Posts first (at least one), then pending backfills (at least one), so neither starves the
    // other and a backfill sees the pulled authors as the posts before it left them.
    const postsLeft = await fanOutPosts(tx, maxFollowers, budget, started)
    const backfillsLeft = await backfillPending(tx, () => performance.now() - started < budget.ms)
    return postsLeft + (backfillsLeft ? 1 : 0)
  })
}

/** The posts part of a slice (fanOutPending), within what is left of `budget` since `started`. */
async function fanOutPosts(tx: Tx, maxFollowers: number, budget: SliceBudget, started: number): Promise<number> {
  const start = await cursorOf(tx)
  let cursor = start
  let rows = 0
  for (let batch = await nextPending(tx, cursor); batch.length > 0; batch = await nextPending(tx, cursor)) {
    for (const post of batch) {
      const cost = rowsOf(post, maxFollowers)
      const spent = rows > 0 && (rows + cost > budget.rows || performance.now() - started >= budget.ms)
      if (spent) return finish(tx, start, cursor)
      await fanOutPost(tx, { id: post.id, userId: post.user_id, createdAt: post.created_at }, post.followers_count, maxFollowers)
      rows += cost
      cursor = post.id
    }
  }
  return finish(tx, start, cursor)
}

/**
 * Moves the cursor (when the slice fanned anything out) and measures what is left by the id span
 * past it: O(1) (`max(id)` is the posts b-tree's last entry) where counting would read the backlog.
 * Post ids have no gaps while posts are never deleted; were some, the span would only overcount,
 * and it is 0 exactly when nothing is pending (the newest post is past the cursor or is not).
 */
async function finish(tx: Tx, start: number, cursor: number): Promise<number> {
  if (cursor !== start) await tx.run(sql`update ${timelineFanout} set post_id = ${cursor} where id = 1`)
  const left = await tx.get<{ n: number }>(sql`select max(coalesce((select max(id) from ${posts}), 0) - ${cursor}, 0) as n`)
  return left!.n
}

/** The cursor, the newest post id and whether a backfill is pending: three O(1) lookups, no write lock. */
const progress = prepared((db) =>
  db
    .select({
      cursor: timelineFanout.postId,
      newest: sql<number | null>`(select max(m.id) from ${posts} m)`,
      backfills: sql<number>`exists (select 1 from ${timelineBackfills})`,
    })
    .from(timelineFanout)
    .where(eq(timelineFanout.id, 1))
    .prepare(),
)

/** Whether any post waits to be fanned out or any follow to be backfilled, read without taking the write lock. */
export async function hasPendingWork(db: ReadDb): Promise<boolean> {
  const row = await progress(db).get()
  return row !== undefined && ((row.newest ?? 0) > row.cursor || Boolean(row.backfills))
}

/** The process's fan-out runner (`services.fanout`). */
export interface Fanout {
  /** The most of a busy event loop this runner takes: BUSY_SHARE divided among the server's processes (FanoutOptions.processes). */
  readonly share: number
  /** A post was stored, or a follow made, by this process: fan it out (backfill it) soon. */
  notify(): void
  /** Runs slices until nothing is pending; rejects with a slice's error. For tests and tools. */
  drain(): Promise<void>
  /**
   * Stops the background loop once its current slice is done. A runner without one (the embedded
   * CLI) first fans out for at most CLOSE_DRAIN_MS if this process stored posts or made follows,
   * so they do not wait for the next server to start.
   */
  close(): Promise<void>
}

export interface FanoutDeps {
  db: Db
  /** For the poll's check, which must not take the write lock. */
  reads: ReadDb
  /** Reads the pages of a slice's backfills before it takes the write lock (db/warm.ts); none by default. */
  warm?: Warm
  logger: Logger
  maxFollowers: number
}

export interface FanoutOptions {
  /**
   * Run slices on this process's event loop while posts are pending: woken by `notify` and every
   * FANOUT_POLL_MS (for posts of other processes). Off for a one-command process.
   */
  background: boolean
  /**
   * Processes of one server that each run a runner on this database (`plaza serve --workers N`;
   * default 1): each takes BUSY_SHARE / processes of its loop, so the server's fan-out takes the
   * same share of the write lock however many there are.
   */
  processes?: number
}

/**
 * Between two slices: while the process is taking posts (`postsArriving`) or the rest of the event
 * loop has other work, the runner stands back so that it takes at most `share` of the loop (up
 * to YIELD_MAX_MS at a time), so a burst of posts is answered first; an idle loop goes straight on
 * to the next slice. A bare setImmediate would let in only what is ready at that moment, and a
 * request takes a few turns of the loop (body, session, transaction, answer), each
 * of them then behind a slice: on the 1M-post network the runner then kept pace with the posts and
 * they were answered no faster than with the fan-out in their own transactions.
 */
async function standBack(sliceMs: number, postsArriving: boolean, share: number, shared: boolean): Promise<void> {
  const started = performance.now()
  await new Promise((resolve) => setImmediate(resolve))
  const rest = standBackMs(sliceMs, performance.now() - started, postsArriving, share, shared)
  if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest))
}

/**
 * How long the runner waits after a slice of `sliceMs`, once the rest of the loop has had a turn
 * that took `othersMs`: nothing on an idle loop, else enough for the slice to be `share` of it;
 * `shared` (other processes write to the database): at least LOCK_DOOR_MS in all, idle or not.
 */
export function standBackMs(sliceMs: number, othersMs: number, postsArriving: boolean, share = BUSY_SHARE, shared = false): number {
  const door = shared ? LOCK_DOOR_MS - othersMs : 0
  if (!postsArriving && othersMs <= BUSY_MS) return Math.max(0, door)
  return Math.max(0, door, Math.min(sliceMs * (1 / share - 1), YIELD_MAX_MS) - othersMs)
}

class FanoutRunner implements Fanout {
  readonly #deps: FanoutDeps
  readonly #background: boolean
  readonly share: number
  /** Other processes of the server write to the database: leave the lock a door between slices (LOCK_DOOR_MS). */
  readonly #shared: boolean
  readonly #timer: NodeJS.Timeout | undefined
  /** The background loop while it runs. */
  #loop: Promise<void> | null = null
  /** Work arrived since the loop's last slice started. */
  #wanted = false
  /** A slice failed: wait for the next poll before trying again, so a lasting fault logs once a poll. */
  #backingOff = false
  #stored = false
  /** Posts this process stored since the loop last stood back. */
  #arrived = 0
  /** How long the last slice took: the loop stands back as long before the next one while posts arrive. */
  #lastSliceMs = 0
  #closed = false

  constructor(deps: FanoutDeps, options: FanoutOptions) {
    this.#deps = deps
    this.#background = options.background
    const processes = Math.max(1, options.processes ?? 1)
    this.share = BUSY_SHARE / processes
    this.#shared = processes > 1
    if (this.#background) {
      this.#timer = setInterval(() => void this.#poll(), FANOUT_POLL_MS).unref()
      // What a previous process left pending is fanned out now, not at the first tick.
      void this.#poll()
    }
  }

  notify(): void {
    this.#stored = true
    this.#arrived++
    if (!this.#background) return
    this.#wanted = true
    if (!this.#backingOff) this.#start()
  }

  async drain(): Promise<void> {
    while ((await this.#slice()) > 0);
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#loop
    if (!this.#background && this.#stored) await this.#drainFor(CLOSE_DRAIN_MS)
  }

  async #slice(): Promise<number> {
    await this.#warmBackfills()
    return fanOutPending(this.#deps.db, this.#deps.maxFollowers, FANOUT_BUDGET)
  }

  /**
   * Reads the pages of the next slice's backfills (each the follower's timeline and the followee's
   * newest posts) outside the write lock, as a follow did before it. A hint: a failed read is dropped.
   */
  async #warmBackfills(): Promise<void> {
    const warm = this.#deps.warm ?? noWarm
    if (warm === noWarm) return
    let pairs: Array<[number, number]>
    try {
      pairs = await this.#deps.reads.values<[number, number]>(nextBackfills)
    } catch {
      return
    }
    await Promise.all(pairs.map((pair) => warm(backfillPages({ follower: pair[0], followee: pair[1] }))))
  }

  async #poll(): Promise<void> {
    this.#backingOff = false
    if (this.#loop || this.#closed) return
    try {
      if (await hasPendingWork(this.#deps.reads)) this.#wanted = true
    } catch (error) {
      this.#deps.logger.error('timeline fan-out: reading its progress failed', { error: describe(error) })
    }
    if (this.#wanted) this.#start()
  }

  #start(): void {
    if (this.#loop || this.#closed) return
    this.#loop = this.#run()
  }

  /**
   * Slices until nothing is pending, standing back before each so requests interleave. Before the
   * first one too: while posts keep arriving, each one's notify would otherwise start a slice at
   * once, and the runner would keep pace with the posts at the expense of answering them.
   */
  async #run(): Promise<void> {
    do {
      const postsArriving = this.#arrived > 0
      this.#arrived = 0
      await standBack(this.#lastSliceMs, postsArriving, this.share, this.#shared)
      if (this.#closed) break
      this.#wanted = false
      const started = performance.now()
      try {
        if ((await this.#slice()) > 0) this.#wanted = true
      } catch (error) {
        this.#deps.logger.error('timeline fan-out failed; retrying at the next poll', { error: describe(error) })
        this.#backingOff = true
        break
      } finally {
        this.#lastSliceMs = performance.now() - started
      }
    } while (this.#wanted && !this.#closed)
    this.#loop = null
  }

  async #drainFor(ms: number): Promise<void> {
    const deadline = performance.now() + ms
    try {
      while ((await this.#slice()) > 0 && performance.now() < deadline);
    } catch (error) {
      this.#deps.logger.error('timeline fan-out failed; the next server will retry', { error: describe(error) })
    }
  }
}

/** The fan-out runner of a process (see FanoutOptions). */
export function startFanout(deps: FanoutDeps, options: FanoutOptions): Fanout {
  return new FanoutRunner(deps, options)
}
