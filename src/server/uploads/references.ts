import { TRPCError } from '@trpc/server'
import { and, eq } from 'drizzle-orm'
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
