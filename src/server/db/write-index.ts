/**
 * The replication index of the latest write this host made to a libsql server (server-client.ts):
 * what a read through a replica must wait for so that a client reads its own writes.
 *
 * The processes of one `plaza serve --workers N` are one host to a client (the cluster hands its
 * connections to any of them), so a write through one process must be waited for by the reads of
 * all. They share the figure through a small file in the data directory: each cluster worker writes
 * its own latest index into a slot of its own (8 bytes at 8 × its id) before its write is answered,
 * and `latest()` reads every slot (one pread of a page). A process outside a cluster keeps it in memory.
 */
import cluster from 'node:cluster'
import { closeSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import path from 'node:path'

/** Slots in the file: worker ids past this share a slot (a slot only ever moves forward, so sharing one can only make a read wait longer). */
const SLOTS = 512

export class WriteIndex {
  /** This process's latest write. */
  own = 0n
  readonly #fd: number | null
  readonly #slot: number
  readonly #page = Buffer.alloc(SLOTS * 8)

  /** `dataDir`: where a cluster's processes share the figure; none for a process on its own. */
  constructor(dataDir?: string) {
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
    if (index <= this.own) return
    this.own = index
    if (this.#fd === null) return
    const slot = Buffer.alloc(8)
    slot.writeBigUInt64LE(index)
    writeSync(this.#fd, slot, 0, 8, this.#slot * 8)
  }

  /** The latest write of any process of this host. */
  latest(): bigint {
    if (this.#fd === null) return this.own
    const read = readSync(this.#fd, this.#page, 0, this.#page.length, 0)
    let latest = this.own
    for (let offset = 0; offset + 8 <= read; offset += 8) {
      const index = this.#page.readBigUInt64LE(offset)
      if (index > latest) latest = index
    }
    return latest
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd)
  }
}
