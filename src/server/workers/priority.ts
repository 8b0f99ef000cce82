/**
 * CPU priority for heavy work (issue #44): renders, speech, sandboxes, image processing and video
 * run at a lower priority than the threads that answer the social API, so a storm of them slows a
 * login or a feed read as little as the machine allows. Linux keeps a nice value per thread;
 * where the system refuses (or is not Linux), the work runs at the process's priority.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The nice value of heavy work: well below the event loop that answers logins and feeds (0). Nice 10 weighs about a tenth of nice 0. */
export const WORKER_NICE = 10

/** Lowers the calling thread's priority (a worker thread's own, not its process's event loop). */
export function lowerThreadPriority(nice: number = WORKER_NICE): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice)
  } catch {
    // No /proc (not Linux) or not permitted: the thread runs at the process's priority.
  }
}

const lowered = new Set<number>()

/**
 * Lowers the priority of this process's threads named `name` (as /proc shows them, at most 15
 * characters) that are not lowered yet: libvips's workers, which sharp's calls hand their pixels
 * to, and which are started by the shared thread pool at its priority. Cheap enough to call after
 * every image job (a read of /proc/self/task).
 */
export function lowerThreadsNamed(name: string, nice: number = WORKER_NICE): void {
  let tids: string[]
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return
  }
  for (const entry of tids) {
    const tid = Number(entry)
    if (lowered.has(tid)) continue
    try {
      if (readFileSync(`/proc/self/task/${entry}/comm`, 'utf8').trim() !== name) continue
      setPriority(tid, nice)
      lowered.add(tid)
    } catch {
      // The thread ended meanwhile, or the system refuses.
    }
  }
  // Forget threads that ended, so that a reused id is looked at again.
  if (lowered.size > 256) for (const tid of lowered) if (!tids.includes(String(tid))) lowered.delete(tid)
}

const NICE = ['/usr/bin/nice', '/bin/nice'].find((file) => existsSync(file))

/**
 * A command line that runs `command` at the heavy work's priority from its first instruction (so
 * every thread it starts inherits it): under `nice` where the system has it, as it is otherwise.
 */
export function niced(command: string, args: string[], nice: number = WORKER_NICE): [string, string[]] {
  return NICE ? [NICE, ['-n', String(nice), command, ...args]] : [command, args]
}

/**
 * A pool's default size in one of a cluster's `processes` (`plaza serve --workers N`): the
 * machine-wide default shared out, at least one each, so that N processes do not each start the
 * workers (and hold the memory) meant for the whole machine.
 */
export function perProcess(machineWide: number, processes = 1): number {
  return Math.max(1, Math.floor(machineWide / Math.max(1, processes)))
}
