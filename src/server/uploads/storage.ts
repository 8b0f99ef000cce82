/**
 * Where uploaded and generated files live. Routes and the pipeline speak only this interface, by
 * relative key (`uploads/<kind>/<name>.<ext>`), so an object store can replace the local disk
 * without touching them.
 */
import { randomBytes } from 'node:crypto'
import { constants, createWriteStream } from 'node:fs'
import { mkdir, open, realpath, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** The only keys storage accepts: one folder level under `uploads/`, a plain name, a short extension. */
export const STORAGE_KEY_PATTERN = /^uploads\/[a-z]{2,20}\/[A-Za-z0-9_-]{8,128}\.[a-z0-9]{2,5}$/

export interface StoredFile {
  size: number
  modifiedAt: Date
}

/** An inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number
  end: number
}

export interface Storage {
  /** Stores `body` under `key` atomically: readers see the whole file or nothing, and a failure leaves nothing behind. */
  put(key: string, body: Readable | Buffer): Promise<StoredFile>
  /** The file's bytes (or one range of them); null when there is no such file. */
  get(key: string, range?: ByteRange): Promise<Readable | null>
  /** Size and modification time; null when there is no such file. */
  stat(key: string): Promise<StoredFile | null>
  /** Removes the file; succeeds when it is already gone. */
  delete(key: string): Promise<void>
}

export class InvalidStorageKeyError extends Error {
  constructor(key: string) {
    super(`not a storage key: ${JSON.stringify(key)}`)
  }
}

function assertKey(key: string) {
  if (!STORAGE_KEY_PATTERN.test(key)) throw new InvalidStorageKeyError(key)
}

/** Files on the local disk under `root` (the data directory), never following a symlink out of it. */
export class LocalDiskStorage implements Storage {
  private realRoot: Promise<string> | null = null

  constructor(private readonly root: string) {}

  private file(key: string): string {
    assertKey(key)
    return path.join(this.root, ...key.split('/'))
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

  async put(key: string, body: Readable | Buffer): Promise<StoredFile> {
    const file = this.file(key)
    const dir = path.dirname(file)
    await mkdir(dir, { recursive: true })
    // A dot name never matches a key, so a temp file can never be served or overwritten by a reader.
    const temp = path.join(dir, `.tmp-${randomBytes(12).toString('hex')}`)
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, createWriteStream(temp, { flags: 'wx', mode: 0o644 }))
      await rename(temp, file)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
    const info = await stat(file)
    return { size: info.size, modifiedAt: info.mtime }
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
    await unlink(this.file(key)).catch((error) => {
      if (!isMissing(error)) throw error
    })
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
