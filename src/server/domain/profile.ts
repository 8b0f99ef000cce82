/** Changing one's own profile: name, bio, avatar, and whether the account is private. */
import { eq, sql } from 'drizzle-orm'
import type { UpdateProfile } from '../../shared/schemas/users.js'
import type { UserProfile } from '../../shared/types.js'
import { writeTransaction, type Db } from '../db/client.js'
import { users } from '../db/schema.js'
import { assertOwnUpload } from '../uploads/references.js'
import type { Fanout } from './fanout.js'
import { approveAllFollowRequests } from './follow-requests.js'
import { recountAuthorTags } from './hashtags.js'
import { loadProfile } from './users.js'

/**
 * Changes the fields given (an empty avatar removes it); an avatar must be the caller's own upload.
 * Turning the account private keeps its followers; turning it public approves every pending follow
 * request, in the same transaction. Either way the hashtag counts of its public posts move, as
 * `posts_count` counts the posts anyone may see (hashtags.ts).
 */
export async function updateProfile(db: Db, fanout: Pick<Fanout, 'notify'>, userId: number, input: UpdateProfile, now: Date): Promise<UserProfile> {
  const changes: Partial<typeof users.$inferInsert> = {}
  if (input.full_name !== undefined) changes.fullName = input.full_name
  if (input.bio !== undefined) changes.bio = input.bio
  if (input.avatar !== undefined) changes.avatar = input.avatar
  let followed = 0
  if (Object.keys(changes).length > 0 || input.is_private !== undefined) {
    await writeTransaction(db, async (tx) => {
      if (input.avatar) await assertOwnUpload(tx, userId, input.avatar)
      if (Object.keys(changes).length > 0) await tx.update(users).set(changes).where(eq(users.id, userId))
      if (input.is_private === undefined) return
      const switched = await tx.run(sql`update ${users} set is_private = ${input.is_private ? 1 : 0} where id = ${userId} and is_private <> ${input.is_private ? 1 : 0}`)
      if (switched.rowsAffected === 0) return
      await recountAuthorTags(tx, userId, input.is_private ? -1 : 1)
      if (!input.is_private) followed = await approveAllFollowRequests(tx, userId, now)
    })
  }
  if (followed > 0) fanout.notify()
  return loadProfile(db, userId, userId, now)
}
