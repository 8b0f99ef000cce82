/**
 * The embedded replica's sync (replica.ts): a worker thread that owns libsql's replicated
 * connection to the local replica file and pulls the primary's new frames into it, every
 * `intervalMs` and whenever the host asks after a write. libsql's sync calls block their thread for
 * a round trip to the server, which is why they run here and not on the event loop. Plaza reads the
 * file through connections of its own (inline.ts, readers.ts): each sees a sync once it has committed.
 */
import { chmodSync, existsSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'libsql'

const port = parentPort
if (!port) throw new Error('replica-worker.ts runs as a worker thread')

export interface ReplicaWorkerSettings {
  file: string
  url: string
  authToken?: string
  intervalMs: number
}

/** To the host: the frame the replica has reached, or why a sync failed (`id` answers a request). */
export interface ReplicaReport {
  id?: number
  ready?: boolean
  frame?: string
  error?: string
}

const settings = workerData as ReplicaWorkerSettings
let frame = 0n

function sync(): ReplicaReport {
  try {
    const synced = replica.sync() as { frame_no?: number | null }
    if (synced.frame_no !== null && synced.frame_no !== undefined) frame = BigInt(synced.frame_no)
    return { frame: String(frame) }
  } catch (error) {
    return { frame: String(frame), error: String((error as Error)?.message ?? error) }
  }
}

/**
 * The replica holds emails and password hashes, as plaza.db does: 0600 whatever the umask. libsql
 * makes its file (it refuses one made before it, which has no sync metadata) with the umask's mode,
 * so the file is narrowed as soon as it exists, before the first sync brings any data (SQLite gives
 * its -wal and -shm the database file's mode), and libsql's own files beside it after that sync.
 */
function makePrivate(): void {
  for (const suffix of ['', '-wal', '-shm', '-info', '-client_wal_index']) {
    if (existsSync(settings.file + suffix)) chmodSync(settings.file + suffix, 0o600)
  }
}

let replica: InstanceType<typeof Database>
try {
  // Nothing is written through this connection (writes go to the server over Hrana, server-client.ts).
  replica = new Database(settings.file, { syncUrl: settings.url, authToken: settings.authToken ?? '', readYourWrites: false } as never)
  makePrivate()
} catch (error) {
  port.postMessage({ ready: false, error: String((error as Error)?.message ?? error) } satisfies ReplicaReport)
  throw error
}
const first = sync()
makePrivate()
port.postMessage({ ready: true, ...first } satisfies ReplicaReport)

// The periodic sync speaks only of failures and progress; a sync asked for answers with its `id`.
const timer = setInterval(() => port.postMessage(sync()), settings.intervalMs)

port.on('message', (message: { type: string; id?: number }) => {
  if (message.type === 'sync') {
    // One sync brings everything the primary has: the frame asked for was acknowledged before the question.
    port.postMessage({ ...sync(), id: message.id })
  }
  if (message.type === 'stop') {
    clearInterval(timer)
    replica.close()
    port.close()
  }
})
