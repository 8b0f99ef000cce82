/**
 * The replication index of the latest write this host made to a libsql server (server-client.ts):
 * what a read through a replica must wait for so that a client reads its own writes.
 *
 * The processes of one `plaza serve --workers N` are one host to a client (the cluster hands its
 * connections to any of them), so a write through one process must be waited for by the reads of
 * all. They share the figure through a small file in the data directory: each cluster worker writes
 * its own latest index and when it wrote it into a slot of its own (16 bytes at 16 × its id) before
 * its write is answered, and `latest()` reads every slot (one pread of two pages). A process outside
 * a cluster keeps it in memory.
 *
 * An index is waited for during WINDOW_MS after its write: a replica is milliseconds behind, so a
 * client's next requests are what read-your-writes is about, and a primary that crashed starts a
 * new replication log whose indexes begin again from 1 (sqld), which an old index would wait for in
 * vain. For the same reason a request that timed out while waiting for an index forgets the indexes
 * noted before it (`forget`): after a primary's crash, this host's reads through a replica wait
 * once, for the request deadline, then go on.
 */
import cluster from 'node:cluster'
import { closeSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import path from 'node:path'

/** Slots in the file: worker ids past this share a slot (its latest writer's figure wins). */
const SLOTS = 512
const SLOT_BYTES = 16

/** How long after a write the reads of this host wait for it. */
const WINDOW_MS = 30_000

export class WriteIndex {
  /** This process's latest write (the highest index: what reads wait for). */
  own = 0n
  /** Writes noted so far, and the index of the last one (lower than `own` when the primary began a new log). */
  count = 0
  last = 0n
  #ownAt = 0
  /** Indexes noted before this time are not waited for (`forget`). */
  #forgottenAt = 0
  readonly #fd: number | null
  readonly #slot: number
  readonly #page = Buffer.alloc(SLOTS * SLOT_BYTES)
  readonly #now: () => number

  /** `dataDir`: where a cluster's processes share the figure; none for a process on its own. */
  constructor(dataDir?: string, now: () => number = Date.now) {
    this.#now = now
    const shared = dataDir !== undefined && cluster.isWorker
    this.#slot = shared ? cluster.worker!.id % SLOTS : 0
    if (shared) {
      const file = path.join(dataDir, 'replication-index')
      mkdirSync(dataDir, { recursive: true, mode: 0o700 })
      // Created if missing ('a' never truncates), then opened for writing at an offset ('a' would append).
      closeSync(openSync(file, 'a', 0o600))
      this.#fd = openSync(file, 'r+')
    } else {
      this.#fd = null
    }
  }

  /** Records a write that reached `index`. */
  note(index: bigint): void {
    this.count++
    this.last = index
    if (index <= this.own) return
    this.own = index
    this.#ownAt = this.#now()
    if (this.#fd === null) return
    const slot = Buffer.alloc(SLOT_BYTES)
    slot.writeBigUInt64LE(index, 0)
    slot.writeBigUInt64LE(BigInt(this.#ownAt), 8)
    writeSync(this.#fd, slot, 0, SLOT_BYTES, this.#slot * SLOT_BYTES)
  }

  /** The index reads must wait for: the latest write of any process of this host within WINDOW_MS, or 0n. */
  latest(): bigint {
    const since = Math.max(this.#now() - WINDOW_MS, this.#forgottenAt)
    let latest = this.#ownAt > since ? this.own : 0n
    if (this.#fd === null) return latest
    const read = readSync(this.#fd, this.#page, 0, this.#page.length, 0)
    for (let offset = 0; offset + SLOT_BYTES <= read; offset += SLOT_BYTES) {
      const index = this.#page.readBigUInt64LE(offset)
      if (index > latest && Number(this.#page.readBigUInt64LE(offset + 8)) > since) latest = index
    }
    return latest
  }

  /** Stops waiting for the indexes noted so far (a request waiting for one timed out: the server may never reach it). */
  forget(): void {
    this.#forgottenAt = this.#now()
    this.own = 0n
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd)
  }
}
