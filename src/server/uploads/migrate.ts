/**
 * Copies a data directory's files (`<dataDir>/uploads/<kind>/<name>.<ext>`) to another storage
 * under the same keys (`plaza admin storage migrate`, docs/storage.md). Idempotent: a file the
 * target already holds at the same size is skipped, so an interrupted run is simply run again.
 * Files are streamed (never whole in memory), a few at a time.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { LocalDiskStorage, STORAGE_KEY_PATTERN, type Storage } from './storage.js'

export interface MigrationReport {
  /** Files copied by this run. */
  copied: number
  /** Files the target already held (same key, same size). */
  skipped: number
  /** Bytes copied by this run. */
  bytes: number
  /** Files that could not be copied, with why; the run goes on past them. */
  failed: Array<{ key: string; error: string }>
}

/** Files copied at once: enough to hide one request's latency, few enough to stay polite. */
const PARALLEL = 4

/** The storage keys of the files under `<dataDir>/uploads` (staged and stray files are not keys, so they stay behind). */
export async function localKeys(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'uploads')
  const keys: string[] = []
  let kinds: import('node:fs').Dirent[]
  try {
    kinds = await readdir(root, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return keys
    throw error
  }
  for (const kind of kinds) {
    if (!kind.isDirectory()) continue
    for (const file of await readdir(path.join(root, kind.name), { withFileTypes: true })) {
      const key = `uploads/${kind.name}/${file.name}`
      if (file.isFile() && STORAGE_KEY_PATTERN.test(key)) keys.push(key)
    }
  }
  return keys.sort()
}

/** Copies every file of `dataDir` that `target` does not hold yet; `onFile` hears of each one as it is done. */
export async function migrateFiles(
  dataDir: string,
  target: Storage,
  onFile?: (key: string, outcome: 'copied' | 'skipped' | 'failed') => void,
): Promise<MigrationReport> {
  const source = new LocalDiskStorage(dataDir)
  const keys = await localKeys(dataDir)
  const report: MigrationReport = { copied: 0, skipped: 0, bytes: 0, failed: [] }
  const copyOne = async (key: string) => {
    let body: Readable | null = null
    try {
      const [file, there] = await Promise.all([source.stat(key), target.stat(key)])
      // Gone since the listing, or a symlink: LocalDiskStorage never follows one out of the directory.
      if (!file) throw new Error('not a regular file inside the data directory')
      if (there && there.size === file.size) {
        report.skipped++
        return onFile?.(key, 'skipped')
      }
      body = await source.get(key)
      if (!body) throw new Error('not a regular file inside the data directory')
      const staged = await target.stage(key, body)
      await staged.commit()
      report.copied++
      report.bytes += staged.size
      onFile?.(key, 'copied')
    } catch (error) {
      body?.destroy()
      report.failed.push({ key, error: (error as Error).message })
      onFile?.(key, 'failed')
    }
  }
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, keys.length) }, async () => {
      while (next < keys.length) await copyOne(keys[next++])
    }),
  )
  report.failed.sort((a, b) => (a.key < b.key ? -1 : 1))
  return report
}
