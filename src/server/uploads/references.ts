import { TRPCError } from '@trpc/server'
import { and, eq, sql } from 'drizzle-orm'
import type { Db, Tx } from '../db/client.js'
import { uploads } from '../db/schema.js'

/**
 * Checks that a media field names a file the caller uploaded (the format itself is checked by the
 * zod schema `uploadPath`), so posts, stories and avatars can only reference real, own uploads.
 */
export async function assertOwnUpload(db: Db | Tx, userId: number, path: string): Promise<void> {
  const [row] = await db
    .select({ id: uploads.id })
    .from(uploads)
    .where(and(eq(uploads.path, path), eq(uploads.userId, userId)))
    .limit(1)
  if (!row) throw new TRPCError({ code: 'BAD_REQUEST', message: `${path} is not one of your uploads` })
}

/**
 * assertOwnUpload for several paths at once (a carousel's): one query on `uploads_path_idx`. The
 * first path that is not the caller's is named in the 400.
 */
export async function assertOwnUploads(db: Db | Tx, userId: number, paths: readonly string[]): Promise<void> {
  if (paths.length === 1) return assertOwnUpload(db, userId, paths[0])
  const rows = await db
    .select({ path: uploads.path })
    .from(uploads)
    .where(and(sql`${uploads.path} in (select value from json_each(${JSON.stringify(paths)}))`, eq(uploads.userId, userId)))
  const own = new Set(rows.map((row) => row.path))
  const missing = paths.find((path) => !own.has(path))
  if (missing !== undefined) throw new TRPCError({ code: 'BAD_REQUEST', message: `${missing} is not one of your uploads` })
}
