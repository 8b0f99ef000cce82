/**
 * Files in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...), behind the same `Storage`
 * interface as the local disk (docs/storage.md). Loaded only when `PLAZA_STORAGE_URL` names a
 * bucket: the SDK is large, and a CLI command that never stores a file should not load it.
 *
 * The local disk's two steps map onto objects as they are: `stage` streams the file to
 * `<prefix>/uploads/.staging/<kind>.<name>.<ext>.<random>` (a multipart upload of bounded parts,
 * so no file is ever whole in memory, and an object only appears once all of it arrived), and
 * `commit` copies it into place inside the bucket (a server-side copy, atomic for readers) and
 * deletes the staged object. `sweep` finishes or removes what a crash left, as on disk.
 */
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { ConfigError } from '../config.js'
import { describeStorage, type S3StorageConfig } from './storage-config.js'
import {
  InvalidStorageKeyError,
  STAGED_GRACE_MS,
  STORAGE_KEY_PATTERN,
  type ByteRange,
  type StagedFile,
  type Storage,
  type StoredFile,
  type SweepReport,
} from './storage.js'

/** Multipart part size: memory per upload in flight is at most `PART_SIZE × PART_QUEUE`. */
const PART_SIZE = 8 * 1024 * 1024
const PART_QUEUE = 2

/** Connections to the store per process: proxied downloads each hold one while they stream. */
const MAX_SOCKETS = 256

const STAGED_KEY = /^([a-z]{2,20})\.([A-Za-z0-9_-]{8,128}\.[a-z0-9]{2,5})\.[A-Za-z0-9_-]{12}$/

/** The type stored with an object, so the bucket serves it right when reached directly (a CDN, a redirect). */
const MIME_BY_EXT: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  webm: 'video/webm',
  svg: 'image/svg+xml',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
}

export function mimeOfKey(key: string): string {
  return MIME_BY_EXT[key.slice(key.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
}

/** A failed call to the object store, with a message fit for a log line (the store's error code, never a credential). */
export class ObjectStoreError extends Error {
  override name = 'ObjectStoreError'
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode
}

function isMissing(error: unknown): boolean {
  const name = (error as Error)?.name
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchUpload' || statusOf(error) === 404
}

function describeError(error: unknown): string {
  const name = (error as Error)?.name ?? 'Error'
  const status = statusOf(error)
  const message = (error as Error)?.message?.split('\n')[0] ?? String(error)
  return `${name}${status ? ` (HTTP ${status})` : ''}${message && message !== name && message !== 'UnknownError' ? `: ${message}` : ''}`
}

export class S3Storage implements Storage {
  readonly redirectFor?: Storage['redirectFor']
  private readonly base: string
  private readonly name: string

  constructor(
    private readonly config: S3StorageConfig,
    private readonly client: S3Client,
  ) {
    this.base = config.prefix ? `${config.prefix}/` : ''
    this.name = describeStorage(config)
    if (config.serve === 'redirect') {
      // Half the URL's validity: a client reusing the redirect near its end still has time to fetch.
      const maxAgeSeconds = Math.floor(config.presignTtlMs / 2000)
      this.redirectFor = async (key, mime) => ({ url: await this.presign(key, mime), maxAgeSeconds })
    }
  }

  private objectKey(key: string): string {
    if (!STORAGE_KEY_PATTERN.test(key)) throw new InvalidStorageKeyError(key)
    return this.base + key
  }

  private get stagingPrefix(): string {
    return `${this.base}uploads/.staging/`
  }

  private storeError(what: string, error: unknown): Error {
    if (error instanceof ObjectStoreError || error instanceof InvalidStorageKeyError) return error
    return new ObjectStoreError(`object storage ${this.name}: ${what} failed: ${describeError(error)}`, { cause: error })
  }

  /** Runs one call, turning the SDK's errors into an ObjectStoreError that names the store and the operation. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw this.storeError(what, error)
    }
  }

  /**
   * Lists the prefix once, so that a wrong endpoint, bucket or credential stops the start-up with
   * one line (ConfigError) rather than failing the first upload.
   */
  async check(): Promise<void> {
    try {
      await this.client.send(new ListObjectsV2Command({ Bucket: this.config.bucket, Prefix: `${this.base}uploads/`, MaxKeys: 1 }))
    } catch (error) {
      throw new ConfigError(`object storage ${this.name} cannot be used: ${describeError(error)} (check PLAZA_S3_ENDPOINT, PLAZA_S3_REGION, the bucket and the credentials)`)
    }
  }

  async stage(key: string, body: Readable | Buffer): Promise<StagedFile> {
    const target = this.objectKey(key)
    const [, kind, name] = key.split('/')
    const staged = `${this.stagingPrefix}${kind}.${name}.${randomBytes(9).toString('base64url')}`
    let size = 0
    // The source's own failure (a body over its limit, a client gone) is rethrown as it is, not as a store failure.
    let sourceFailure: { error: unknown } | null = null
    async function* counted() {
      try {
        for await (const chunk of Buffer.isBuffer(body) ? [body] : body) {
          size += (chunk as Buffer).length
          yield chunk as Buffer
        }
      } catch (error) {
        sourceFailure = { error }
        throw error
      }
    }
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.config.bucket, Key: staged, Body: Readable.from(counted()), ContentType: mimeOfKey(key) },
      partSize: PART_SIZE,
      queueSize: PART_QUEUE,
      // A failed multipart upload is aborted, so its parts are not left (and billed) in the bucket.
      leavePartsOnError: false,
    })
    try {
      await upload.done()
    } catch (error) {
      if (sourceFailure) throw (sourceFailure as { error: unknown }).error
      throw this.storeError('storing a file', error)
    }
    return {
      size,
      commit: () => this.moveIntoPlace(staged, target, key),
      discard: () => this.call('removing a staged file', () => this.deleteObject(staged)),
    }
  }

  /** Copies a staged object to its key inside the bucket, then deletes the staged one. */
  private async moveIntoPlace(staged: string, target: string, key: string): Promise<StoredFile> {
    return this.call('moving a staged file into place', async () => {
      try {
        await this.client.send(
          new CopyObjectCommand({ Bucket: this.config.bucket, Key: target, CopySource: `${this.config.bucket}/${staged}` }),
        )
        await this.deleteObject(staged)
        const stored = await this.stat(key)
        if (!stored) throw new ObjectStoreError(`object storage ${this.name}: ${key} is missing right after it was stored`)
        return stored
      } catch (error) {
        // A concurrent sweep may have moved it already.
        if (!isMissing(error)) throw error
        const stored = await this.stat(key)
        if (!stored) throw error
        return stored
      }
    })
  }

  private async deleteObject(objectKey: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: objectKey }))
    } catch (error) {
      if (!isMissing(error)) throw error
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    const objectKey = this.objectKey(key)
    return this.call('reading a file', async () => {
      try {
        const answer = await this.client.send(
          new GetObjectCommand({ Bucket: this.config.bucket, Key: objectKey, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
        )
        return answer.Body as Readable
      } catch (error) {
        if (isMissing(error)) return null
        throw error
      }
    })
  }

  async stat(key: string): Promise<StoredFile | null> {
    const objectKey = this.objectKey(key)
    return this.call('reading a file', async () => {
      try {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: objectKey }))
        return { size: head.ContentLength ?? 0, modifiedAt: head.LastModified ?? new Date(0) }
      } catch (error) {
        if (isMissing(error)) return null
        throw error
      }
    })
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key)
    await this.call('deleting a file', () => this.deleteObject(objectKey))
  }

  /** A GET URL signed for `presignTtlMs`, answering with `mime` (what `/uploads/...` redirects to). */
  async presign(key: string, mime: string): Promise<string> {
    const objectKey = this.objectKey(key)
    return this.call('signing a URL', () =>
      getSignedUrl(
        this.client,
        new GetObjectCommand({
          Bucket: this.config.bucket,
          Key: objectKey,
          ResponseContentType: mime,
          ResponseCacheControl: 'public, max-age=31536000, immutable',
        }),
        { expiresIn: Math.floor(this.config.presignTtlMs / 1000) },
      ),
    )
  }

  async close(): Promise<void> {
    this.client.destroy()
  }

  async sweep(isRecorded: (key: string) => Promise<boolean>): Promise<SweepReport> {
    const report: SweepReport = { committed: [], removed: 0 }
    // Object times are the store's clock, so the grace is measured on the real clock too.
    const graceEnd = Date.now() - STAGED_GRACE_MS
    const Bucket = this.config.bucket
    let token: string | undefined
    do {
      const page = await this.call('listing staged files', () =>
        this.client.send(new ListObjectsV2Command({ Bucket, Prefix: this.stagingPrefix, ContinuationToken: token })),
      )
      for (const object of page.Contents ?? []) {
        const staged = object.Key ?? ''
        const match = STAGED_KEY.exec(staged.slice(this.stagingPrefix.length))
        const key = match ? `uploads/${match[1]}/${match[2]}` : null
        if (key && STORAGE_KEY_PATTERN.test(key) && (await isRecorded(key))) {
          await this.moveIntoPlace(staged, this.objectKey(key), key)
          report.committed.push(key)
        } else if (object.LastModified && object.LastModified.getTime() < graceEnd) {
          await this.call('removing a staged file', () => this.deleteObject(staged))
          report.removed++
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)

    // Multipart uploads a crash interrupted: nothing can finish them, and their parts are billed.
    let keyMarker: string | undefined
    let uploadIdMarker: string | undefined
    do {
      const page = await this.call('listing unfinished uploads', () =>
        this.client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: this.stagingPrefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker })),
      )
      for (const upload of page.Uploads ?? []) {
        if (!upload.Initiated || upload.Initiated.getTime() >= graceEnd) continue
        await this.call('aborting an unfinished upload', async () => {
          try {
            await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }))
          } catch (error) {
            if (!isMissing(error)) throw error
          }
        })
        report.removed++
      }
      const more = page.IsTruncated === true
      keyMarker = more ? page.NextKeyMarker : undefined
      uploadIdMarker = more ? page.NextUploadIdMarker : undefined
    } while (keyMarker)
    return report
  }
}

/** The storage a bucket configuration names, with its client (HTTP keep-alive, bounded timeouts, retries). */
export function createS3Storage(config: S3StorageConfig): S3Storage {
  // The SDK warns on Node 20 at every start that its releases after January 2027 will need Node 22.
  // Plaza pins a release that supports Node 20 (package.json), so the warning asks nothing of the
  // operator; its documented switch turns it off unless the operator set it (docs/storage.md).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    // Checksums only where S3 requires them: MinIO, Ceph and R2 do not all accept the newer
    // default ones (aws-chunked bodies with trailing checksums). The payload is still signed.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    // An idle socket (a store that stopped answering) is cut after a minute; a long download that
    // keeps moving is not. Proxied downloads each hold a socket while they stream, hence the pool size.
    requestHandler: {
      connectionTimeout: 5000,
      socketTimeout: 60_000,
      httpAgent: { keepAlive: true, maxSockets: MAX_SOCKETS },
      httpsAgent: { keepAlive: true, maxSockets: MAX_SOCKETS },
    },
  })
  return new S3Storage(config, client)
}
