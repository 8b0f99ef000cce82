/**
 * Files Plaza generates for a JSON answer (code images, and every catalog output stored the same
 * way). Anyone may ask for them, so they must not fill the disk:
 * - content-addressed: the name is a hash of the validated request, so asking again reuses the
 *   stored file (no second render, no second file) and only refreshes its expiry;
 * - they expire (`generatedTtlMs`): an expired file is no longer served, and the sweep deletes it;
 * - together they stay under `generatedMaxBytes`: past it, the files closest to expiry go first.
 */
import { createHash } from 'node:crypto'
import { and, asc, eq, gt, inArray, isNotNull, lte, notInArray, sql } from 'drizzle-orm'
import { writeTransaction } from '../db/client.js'
import { uploads } from '../db/schema.js'
import type { Services } from '../services.js'
import type { StoredKind, StoreFileInput, UploadKind } from './pipeline.js'

export type GeneratedKind = Exclude<StoredKind, UploadKind>

export interface GeneratedRequest {
  kind: GeneratedKind
  /** The validated request, normalised: two requests that must give the same file give equal values here. */
  key: unknown
  ext: StoreFileInput['ext']
  mime: string
  /** Produces the file; called only when no live stored copy exists. */
  render(): Promise<{ body: Buffer; width?: number | null; height?: number | null }>
}

export interface GeneratedFile {
  path: string
  size: number
  width: number | null
  height: number | null
  /** True when a stored copy was reused without rendering. */
  reused: boolean
}

/** How often a serving process deletes expired generated files (they stop being served at expiry already). */
export const MAINTENANCE_INTERVAL_MS = 10 * 60_000

/** Paths being generated right now, per process: the same request waits for the first, and sweeps leave them alone. */
const inFlight = new WeakMap<Services, Map<string, Promise<GeneratedFile>>>()

function inFlightOf(services: Services): Map<string, Promise<GeneratedFile>> {
  let map = inFlight.get(services)
  if (!map) inFlight.set(services, (map = new Map()))
  return map
}

/** JSON with object keys sorted and undefined members left out, so equal values always serialise alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const members = Object.keys(record)
      .filter((name) => record[name] !== undefined)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`)
    return `{${members.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * The storage key of a generated file: sha256 of kind, format and the canonical request, cut to
 * 144 bits (24 base64url characters, the length of upload names): a collision would take about
 * 2^72 tries, so no request can be made to answer another request's file.
 */
export function generatedPath(kind: GeneratedKind, ext: string, key: unknown): string {
  const hash = createHash('sha256').update(`${kind}\n${ext}\n${canonicalJson(key)}`).digest().subarray(0, 18).toString('base64url')
  return `uploads/${kind}/${hash}.${ext}`
}

/** Returns the stored file for `request`, rendering and storing it only when no live copy exists. */
export function storeGenerated(services: Services, request: GeneratedRequest): Promise<GeneratedFile> {
  const path = generatedPath(request.kind, request.ext, request.key)
  const pending = inFlightOf(services)
  const running = pending.get(path)
  if (running) return running.then((file) => ({ ...file, reused: true }))
  const work = produce(services, request, path).finally(() => pending.delete(path))
  pending.set(path, work)
  return work
}

async function produce(services: Services, request: GeneratedRequest, path: string): Promise<GeneratedFile> {
  const now = services.clock().getTime()
  const expiresAt = now + services.config.generatedTtlMs
  // One statement: either the row is live and now lives longer, or it is gone or expired and we render.
  const [live] = await services.db
    .update(uploads)
    .set({ expiresAt })
    .where(and(eq(uploads.path, path), gt(uploads.expiresAt, now)))
    .returning({ size: uploads.size, width: uploads.width, height: uploads.height })
  if (live && (await services.storage.stat(path))) return { path, ...live, reused: true }

  const output = await request.render()
  const staged = await services.storage.stage(path, output.body)
  const row = { size: staged.size, width: output.width ?? null, height: output.height ?? null }
  try {
    await writeTransaction(services.db, (tx) =>
      tx
        .insert(uploads)
        .values({ userId: null, kind: request.kind, path, mime: request.mime, ...row, createdAt: now, expiresAt })
        .onConflictDoUpdate({ target: uploads.path, set: { mime: request.mime, ...row, createdAt: now, expiresAt } }),
    )
  } catch (error) {
    await staged.discard().catch(() => {})
    throw error
  }
  await staged.commit()
  await evictOverCap(services)
  return { path, ...row, reused: false }
}

/** Deletes rows (in one transaction, so a concurrent refresh either wins or sees the row gone), then their files. */
async function deleteGenerated(services: Services, choose: (busy: string[]) => Promise<string[]>): Promise<number> {
  const busy = [...inFlightOf(services).keys()]
  const paths = await choose(busy)
  for (const path of paths) await services.storage.delete(path)
  return paths.length
}

/** Evicts the generated files closest to expiry until their total size is within `generatedMaxBytes`. */
async function evictOverCap(services: Services): Promise<number> {
  const max = services.config.generatedMaxBytes
  const totalOf = async (db: Pick<Services['db'], 'select'>) => {
    const [{ total }] = await db
      .select({ total: sql<number>`coalesce(sum(${uploads.size}), 0)` })
      .from(uploads)
      .where(isNotNull(uploads.expiresAt))
    return total
  }
  // A read first: the write lock is taken only when there is something to evict.
  if ((await totalOf(services.db)) <= max) return 0
  return deleteGenerated(services, (busy) =>
    writeTransaction(services.db, async (tx) => {
      let excess = (await totalOf(tx)) - max
      const victims: string[] = []
      while (excess > 0) {
        const batch = await tx
          .select({ path: uploads.path, size: uploads.size })
          .from(uploads)
          .where(and(isNotNull(uploads.expiresAt), notInArray(uploads.path, [...busy, ...victims])))
          .orderBy(asc(uploads.expiresAt))
          .limit(100)
        if (batch.length === 0) break
        for (const { path, size } of batch) {
          if (excess <= 0) break
          victims.push(path)
          excess -= size
        }
      }
      for (let i = 0; i < victims.length; i += 500) {
        await tx.delete(uploads).where(inArray(uploads.path, victims.slice(i, i + 500)))
      }
      return victims
    }),
  )
}

/** Deletes expired generated files (rows and files), then evicts past the size cap. */
export async function sweepGenerated(services: Services): Promise<{ expired: number; evicted: number }> {
  const now = services.clock().getTime()
  const expiredNow = lte(uploads.expiresAt, now)
  // A read first, so that a sweep with nothing to do never takes the write lock.
  const [due] = await services.db.select({ id: uploads.id }).from(uploads).where(expiredNow).limit(1)
  const expired = !due ? 0 : await deleteGenerated(services, async (busy) => {
    const rows = await services.db
      .delete(uploads)
      .where(and(expiredNow, notInArray(uploads.path, busy)))
      .returning({ path: uploads.path })
    return rows.map((row) => row.path)
  })
  return { expired, evicted: await evictOverCap(services) }
}

/**
 * Start-up recovery and the periodic sweep: finishes or removes what interrupted writes left in
 * storage, deletes expired generated files, then repeats the latter every
 * `MAINTENANCE_INTERVAL_MS` on a timer that does not keep the process alive. Resolves to the stop
 * function, which waits for a sweep in progress.
 */
export async function startMaintenance(services: Services): Promise<() => Promise<void>> {
  const recovered = await services.storage.sweep(async (key) => {
    const [row] = await services.db.select({ id: uploads.id }).from(uploads).where(eq(uploads.path, key)).limit(1)
    return row !== undefined
  })
  if (recovered.committed.length + recovered.removed > 0) {
    services.logger.info('finished interrupted uploads', { committed: recovered.committed.length, removed: recovered.removed })
  }
  let running: Promise<unknown> = sweepGenerated(services)
  await running
  const timer = setInterval(() => {
    running = sweepGenerated(services).catch((error) => services.logger.error('sweep of generated files failed', { error: String(error) }))
  }, MAINTENANCE_INTERVAL_MS)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running.catch(() => {})
  }
}
