/**
 * Warming a write's pages before it takes the write lock.
 *
 * A new row goes into a leaf page of every b-tree of its table: a follow into the three of
 * `follows` (tens of millions of entries on a large network), its notification into those of
 * `notifications`, its backfill into the follower's range of `timelines`. Those leaves are at
 * places no recent request touched, so they are seldom in memory: SQLite's page cache of the
 * writing connection is small and is dropped whenever another process commits, and the operating
 * system keeps only part of a large file cached (of the 2.4-2.6 GB benchmark network, 1.3-1.7 GB,
 * and it lets go of a page read a minute ago). A new follow then reads about ten pages from disk,
 * one after the other, **while it holds SQLite's write lock**, which only one transaction of the
 * whole database can hold: every other write waits for those reads (docs/social.md, Data layer).
 *
 * `warm(query)` runs, before the write transaction begins, a read that visits the same leaves
 * (each write keeps its warming query beside it, e.g. `followPages`), on worker threads of its
 * own: the disk reads happen outside the lock, the warming of many requests at once, and the
 * write finds its pages in the system's cache. It is only a hint. It never fails (a failed read
 * is dropped), and it is skipped when WARM_QUEUE reads are already waiting, so a saturated disk
 * makes writes run cold rather than queue twice, and while the warming reads find their pages in
 * the system's cache anyway (Coldness), but for a probe now and then.
 */
import { sql, type Placeholder, type SQL } from 'drizzle-orm'
import { renderOnce, type Rendered } from './prepared.js'
import type { ReaderPool } from './readers.js'

/** A warming read: its SQL text and values. */
export type Pages = Rendered

/** Reads, outside the write lock, the pages a write is about to change; resolves when they are read (or skipped). */
export type Warm = (pages: Pages) => Promise<void>

/** For a database with nothing to warm: a libsql server (its pages are the server's business), a one-shot command. */
export const noWarm: Warm = () => Promise.resolve()

/** Worker threads that warm (their reads wait on the disk, not the CPU, so a few serve many writes). */
export const WARM_THREADS = 2

/** Warming reads that may wait for a thread; past this, a write goes ahead without warming. */
export const WARM_QUEUE = 64

/**
 * A warming read that took the worker at least this long found pages on the disk: from the
 * system's cache a follow's ten or so leaves take 20-100 µs, from the disk 0.3-2 ms each (on the
 * 1M-post network, both cores busy, a read now and then also waits that long for a core).
 */
export const COLD_READ_MS = 0.5

/** While at least this share of recent warming reads were cold, every write warms; below it, one in WARM_PROBE_EVERY does. */
export const COLD_SHARE = 0.2

/** How often a write warms while its pages are found cached: a probe, which keeps the measure of coldness current. */
export const WARM_PROBE_EVERY = 16

/** How many recent warming reads the measure of coldness weighs (an exponential moving average). */
const COLD_WINDOW = 64

/**
 * Whether the writes' pages are found on disk or in the system's cache, from the warming reads'
 * times. A warming read costs a write about as much CPU as its own statements (the read on a worker
 * thread, a message each way, the wake-ups), which is only worth paying while it spares the write
 * reading from the disk under the lock: on the 1M-post network, follows that came one after the
 * other found their pages cached 93-97% of the time, while on a machine whose page cache had let
 * the file go (docs/social.md, Data layer) cold follows took 2-3 times as long under the lock.
 * So while recent reads were mostly fast, only one write in WARM_PROBE_EVERY warms, and the rest
 * go straight to the lock.
 */
export class Coldness {
  /** The share of recent warming reads that were cold; a process starts assuming the worst. */
  #share = 1
  #sinceProbe = 0

  /** `threshold` 0: every write warms whatever its reads find (bench/warm.ts measures warming itself). */
  constructor(private readonly threshold = COLD_SHARE) {}

  /** Records one warming read's time. */
  record(ms: number): void {
    this.#share += ((ms >= COLD_READ_MS ? 1 : 0) - this.#share) / COLD_WINDOW
  }

  /** Whether the next write warms: every one while pages are cold, one in WARM_PROBE_EVERY while they are not. */
  shouldWarm(): boolean {
    if (this.#share >= this.threshold) return true
    this.#sinceProbe = (this.#sinceProbe + 1) % WARM_PROBE_EVERY
    return this.#sinceProbe === 0
  }

  get share(): number {
    return this.#share
  }
}

/**
 * Warms through `pool` (a ReaderPool of its own, so a long scan never holds up a write's warming),
 * while `coldness` says pages are being found on the disk (and a probe now and then otherwise).
 */
export function poolWarm(pool: ReaderPool, { maxQueued = WARM_QUEUE, coldness = new Coldness() }: { maxQueued?: number; coldness?: Coldness } = {}): Warm {
  return (pages) => {
    if (pool.waiting >= maxQueued || !coldness.shouldWarm()) return Promise.resolve()
    return pool.time(pages.sql, pages.params).then(
      (ms) => coldness.record(ms),
      () => {},
    )
  }
}

/**
 * A warming read of several lookups, each a scalar subquery that ends on one of the leaves
 * (`select max(...) from t indexed by i where ...` reads the leaf where a new entry of that range
 * goes), written with placeholders for the values `names` and rendered once (renderOnce):
 * rendering a like's with drizzle on every call took about 50 µs, more than the read itself when
 * its pages are cached.
 */
export function pagesQuery<K extends string>(names: readonly K[], lookups: (values: Record<K, Placeholder>) => SQL[]): (values: Record<K, number | null>) => Pages {
  return renderOnce(names, (placeholders) => sql`select ${sql.join(
    lookups(placeholders).map((lookup) => sql`(${lookup})`),
    sql`, `,
  )}`)
}
