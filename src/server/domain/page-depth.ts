/**
 * Which reader serves a page of a list read with LIMIT/OFFSET. SQLite steps over every row before
 * the offset, so a page's cost grows with its depth: shallow pages (most requests) are index-range
 * lookups for `services.reads` on the event loop, deep ones go to the `services.scans` workers so
 * they never hold it up.
 */
import type { ReadDb } from '../db/client.js'
import type { Paging } from './posts.js'

/** The deepest row (page × limit) a page may reach and still be read inline. */
export const INLINE_PAGE_DEPTH = 1000

/**
 * The reader for this page: `reads` down to INLINE_PAGE_DEPTH rows, `scans` past it. `rowsRead` is
 * how many rows the query reads whatever the page, when that is more than its depth (a list sorted
 * from a whole range, as whom a user follows).
 */
export function readerForPage(dbs: { reads: ReadDb; scans: ReadDb }, { page, limit }: Paging, rowsRead = 0): ReadDb {
  return Math.max(page * limit, rowsRead) > INLINE_PAGE_DEPTH ? dbs.scans : dbs.reads
}
