/**
 * Where uploaded and generated files live. Routes and the pipeline speak only this interface, by
 * relative key (`uploads/<kind>/<name>.<ext>`), so an object store (s3-storage.ts, chosen by
 * `PLAZA_STORAGE_URL`) replaces the local disk without touching them.
 *
 * A file reaches its key in two steps, so that a crash never leaves a file nobody knows about:
 * `stage` writes it completely under a staging name derived from the key, the caller records it in
 * the database, then `commit` moves it into place. `sweep` (at start-up) finishes what a crash
 * interrupted: a staged file whose key is recorded is moved into place, any other is removed.
 */
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { chmod, mkdir, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'

/** The only keys storage accepts: one folder level under `uploads/`, a plain name, a short extension. */
export const STORAGE_KEY_PATTERN = /^uploads\/[a-z]{2,20}\/[A-Za-z0-9_-]{8,128}\.[a-z0-9]{2,5}$/

/** Staged files wait here; the name is `<kind>.<name>.<ext>`, so the key can be read back from it. */
const STAGING = '.staging'
const STAGED_NAME = /^([a-z]{2,20})\.([A-Za-z0-9_-]{8,128}\.[a-z0-9]{2,5})$/

/**
 * A file still being written (`.part`) or staged without a record is removed by a sweep only once
 * it is this old: another process (the embedded CLI, a second server) may be writing it right now,
 * and no request lasts an hour.
 */
export const STAGED_GRACE_MS = 3600_000

export interface StoredFile {
  size: number
  modifiedAt: Date
}

/** An inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number
  end: number
}

/** A completely written file that is not yet visible under its key. */
export interface StagedFile {
  size: number
  /** Moves the file into place (atomically: readers see the whole file or nothing). */
  commit(): Promise<StoredFile>
  /** Removes the staged file; use it when recording the file failed. */
  discard(): Promise<void>
}

export interface SweepReport {
  /** Keys whose staged file was recorded, so it was moved into place. */
  committed: string[]
  /** Staged or partial files removed (unrecorded, or a write that never finished). */
  removed: number
}

export interface Storage {
  /** Writes `body` completely under a staging name; a failure leaves nothing behind. */
  stage(key: string, body: Readable | Buffer): Promise<StagedFile>
  /** The file's bytes (or one range of them); null when there is no such file. */
  get(key: string, range?: ByteRange): Promise<Readable | null>
  /** Size and modification time; null when there is no such file. */
  stat(key: string): Promise<StoredFile | null>
  /** Removes the file; succeeds when it is already gone. */
  delete(key: string): Promise<void>
  /** Finishes or removes what interrupted writes left: staged files of recorded keys are committed, the rest removed. */
  sweep(isRecorded: (key: string) => Promise<boolean>): Promise<SweepReport>
  /**
   * Set on an object store serving by redirect (`PLAZA_STORAGE_SERVE=redirect`): a short-lived URL
   * where the file can be fetched directly, answering with type `mime`, and how long a client may
   * reuse the redirect (well within the URL's validity).
   */
  redirectFor?(key: string, mime: string): Promise<{ url: string; maxAgeSeconds: number }>
  /** Releases connections (an object store's HTTP client); the storage is not used afterwards. */
  close?(): Promise<void>
}

export class InvalidStorageKeyError extends Error {
  constructor(key: string) {
    super(`not a storage key: ${JSON.stringify(key)}`)
  }
}

function assertKey(key: string) {
  if (!STORAGE_KEY_PATTERN.test(key)) throw new InvalidStorageKeyError(key)
}

/**
 * Files on the local disk under `root` (the data directory), never following a symlink out of it.
 * Folders are 0700 and files 0600 whatever the umask: uploads of private stories are not for
 * other local users.
 */
export class LocalDiskStorage implements Storage {
  private realRoot: Promise<string> | null = null
  private readonly dirs = new Map<string, Promise<void>>()

  constructor(private readonly root: string) {}

  private file(key: string): string {
    assertKey(key)
    return path.join(this.root, ...key.split('/'))
  }

  private staged(key: string): string {
    const [, kind, name] = key.split('/')
    return path.join(this.root, 'uploads', STAGING, `${kind}.${name}`)
  }

  /** Creates `dir` (and the folders above it, up to the root) as 0700 once per process. */
  private ensureDir(dir: string): Promise<void> {
    let made = this.dirs.get(dir)
    if (!made) {
      made = (async () => {
        const parent = path.dirname(dir)
        if (dir !== this.root && parent !== dir) await this.ensureDir(parent)
        await mkdir(dir, { recursive: true, mode: 0o700 })
        // mkdir's mode passes through the umask, and a folder made by an older version may be 0755.
        await chmod(dir, 0o700)
      })()
      made.catch(() => this.dirs.delete(dir))
      this.dirs.set(dir, made)
    }
    return made
  }

  /** The file's path when it is a regular file that really lies where the key says (no symlink on the way), else null. */
  private async resolve(key: string): Promise<string | null> {
    const file = this.file(key)
    try {
      this.realRoot ??= realpath(this.root)
      const [real, root] = await Promise.all([realpath(file), this.realRoot])
      if (real !== path.join(root, ...key.split('/'))) return null
      return (await stat(real)).isFile() ? real : null
    } catch (error) {
      if (isMissing(error)) return null
      throw error
    }
  }

  async stage(key: string, body: Readable | Buffer): Promise<StagedFile> {
    const file = this.file(key)
    const staged = this.staged(key)
    await Promise.all([this.ensureDir(path.dirname(staged)), this.ensureDir(path.dirname(file))])
    // Written under a random `.part` name first, so a staged name only ever holds a complete file,
    // even when two processes stage the same (content-addressed) key at once.
    const part = `${staged}.${randomBytes(9).toString('base64url')}.part`
    try {
      const handle = await open(part, 'wx', 0o600)
      try {
        await handle.chmod(0o600)
        for await (const chunk of Buffer.isBuffer(body) ? [body] : body) {
          const bytes = chunk as Buffer
          for (let done = 0; done < bytes.length; ) done += (await handle.write(bytes, done)).bytesWritten
        }
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(part, staged)
    } catch (error) {
      await unlink(part).catch(() => {})
      throw error
    }
    const { size } = await stat(staged)
    return {
      size,
      commit: async () => {
        try {
          await rename(staged, file)
        } catch (error) {
          // A concurrent sweep (or a second writer of the same key) may have moved it already.
          if (!isMissing(error) || !(await this.resolve(key))) throw error
        }
        const info = await stat(file)
        return { size: info.size, modifiedAt: info.mtime }
      },
      discard: () => removeQuietly(staged),
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    const real = await this.resolve(key)
    if (!real) return null
    try {
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW)
      return handle.createReadStream({ start: range?.start, end: range?.end })
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') return null
      throw error
    }
  }

  async stat(key: string): Promise<StoredFile | null> {
    const real = await this.resolve(key)
    if (!real) return null
    const info = await stat(real)
    return { size: info.size, modifiedAt: info.mtime }
  }

  async delete(key: string): Promise<void> {
    await removeQuietly(this.file(key))
  }

  async sweep(isRecorded: (key: string) => Promise<boolean>): Promise<SweepReport> {
    const dir = path.join(this.root, 'uploads', STAGING)
    const report: SweepReport = { committed: [], removed: 0 }
    let names: string[]
    try {
      names = await readdir(dir)
    } catch (error) {
      if (isMissing(error)) return report
      throw error
    }
    const graceEnd = Date.now() - STAGED_GRACE_MS
    for (const name of names) {
      const staged = path.join(dir, name)
      const match = STAGED_NAME.exec(name)
      const key = match ? `uploads/${match[1]}/${match[2]}` : null
      if (key && STORAGE_KEY_PATTERN.test(key) && (await isRecorded(key))) {
        await this.ensureDir(path.dirname(this.file(key)))
        await rename(staged, this.file(key)).catch((error) => {
          if (!isMissing(error)) throw error
        })
        report.committed.push(key)
        continue
      }
      // File times are the real clock's, so the grace is measured on it too.
      const info = await stat(staged).catch(() => null)
      if (info && info.mtimeMs < graceEnd) {
        await removeQuietly(staged)
        report.removed++
      }
    }
    return report
  }
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch((error) => {
    if (!isMissing(error)) throw error
  })
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
