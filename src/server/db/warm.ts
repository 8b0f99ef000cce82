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
 * makes writes run cold rather than queue twice.
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

/** Warms through `pool` (a ReaderPool of its own, so a long scan never holds up a write's warming). */
export function poolWarm(pool: ReaderPool, maxQueued = WARM_QUEUE): Warm {
  return (pages) => {
    if (pool.waiting >= maxQueued) return Promise.resolve()
    return pool.query(pages.sql, pages.params, 'values').then(
      () => {},
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
export function pagesQuery<K extends string>(names: readonly K[], lookups: (values: Record<K, Placeholder>) => SQL[]): (values: Record<K, number>) => Pages {
  return renderOnce(names, (placeholders) => sql`select ${sql.join(
    lookups(placeholders).map((lookup) => sql`(${lookup})`),
    sql`, `,
  )}`)
}
