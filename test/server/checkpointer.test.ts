import { rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startCheckpointer, type CheckpointReport } from '../../src/server/db/checkpointer.js'
import { openDatabase } from '../../src/server/db/client.js'
import { openConnection, type Connection } from '../../src/server/db/connection.js'
import { tempDir } from '../helpers/server.js'

const walBytes = (file: string) => statSync(`${file}-wal`).size

/**
 * A server's load in miniature: bursts of commits, each made while a reader still reads the
 * snapshot before it (on a server some request is always reading), so a checkpoint run from a
 * commit can never copy the newest frames, the next write never finds the WAL fully copied, and
 * the WAL never rewinds. Between bursts the reader
 * finishes and the event loop turns (as it does between a server's requests); `pause` is awaited then.
 */
async function burstsOfWrites(file: string, writer: Connection, pause: () => Promise<unknown>): Promise<number> {
  writer.exec('CREATE TABLE IF NOT EXISTS pages (id INTEGER PRIMARY KEY, body BLOB)')
  const reader = openConnection(file, { readOnly: true })
  // As the write client does: BEGIN IMMEDIATE, which waits for the lock (a RESTART holds it a moment).
  const begin = writer.prepare('BEGIN IMMEDIATE')
  const insert = writer.prepare('INSERT INTO pages (body) VALUES (randomblob(3000))')
  const commit = writer.prepare('COMMIT')
  const read = reader.prepare('SELECT count(*) FROM pages')
  let largest = 0
  for (let burst = 0; burst < 12; burst++) {
    for (let i = 0; i < 150; i++) {
      begin.run()
      insert.run()
      reader.exec('BEGIN')
      read.get()
      commit.run()
      reader.exec('COMMIT')
    }
    largest = Math.max(largest, walBytes(file))
    await pause()
  }
  reader.close()
  return largest
}

test('the checkpointer rewinds a WAL that checkpoints run from commits would let grow without bound', async () => {
  const dataDir = tempDir()
  const file = path.join(dataDir, 'plaza.db')

  // Without it: SQLite's own checkpoints, from inside the commits.
  const plain = openConnection(file)
  plain.exec('PRAGMA journal_mode = WAL')
  await burstsOfWrites(file, plain, () => new Promise((resolve) => setTimeout(resolve, 30)))
  const grown = walBytes(file)

  // With it: commits never checkpoint; the worker does, and rewinds the WAL past RESTART frames.
  plain.exec('DROP TABLE pages')
  plain.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const writer = openConnection(file)
  writer.exec('PRAGMA wal_autocheckpoint = 0')
  const reports: CheckpointReport[] = []
  const checkpointer = startCheckpointer(file, { intervalMs: 5, restartFrames: 64, onError: (message) => assert.unreachable(message) })
  const largest = await burstsOfWrites(file, writer, async () => reports.push(await checkpointer.runNow()))
  await checkpointer.close()
  writer.close()
  plain.close()

  assert.ok(reports.some((report) => report.restarted), 'a RESTART went through between bursts')
  // 150 pages of about 4 KiB a burst: the WAL holds about one burst, not all twelve.
  assert.ok(largest < grown / 6, `largest WAL ${largest} bytes with the checkpointer, ${grown} without`)
  rmSync(dataDir, { recursive: true, force: true })
})

test("a serving database's write connections leave checkpoints to the checkpointer; a one-shot command's keep SQLite's", async () => {
  const dataDir = tempDir()
  const autocheckpoint = async (checkpoints: boolean) => {
    const database = await openDatabase({ dataDir, checkpoints })
    const rows = await database.db.values<[number]>(sql`PRAGMA wal_autocheckpoint`)
    await database.close()
    return rows[0][0]
  }
  assert.is(await autocheckpoint(true), 0)
  assert.is(await autocheckpoint(false), 1000)
  rmSync(dataDir, { recursive: true, force: true })
})

test.run()
