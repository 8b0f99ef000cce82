/** Changing one's own profile: name, bio, avatar, and whether the account is private. */
import { TRPCError } from '@trpc/server'
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
 * Changes the fields given (an empty avatar removes it); an avatar must be the caller's own upload,
 * and `avatar_alt` describes it (a new avatar without one starts with none; there must be an avatar).
 * Turning the account private keeps its followers; turning it public approves every pending follow
 * request, in the same transaction. Either way the hashtag counts of its public posts move, as
 * `posts_count` counts the posts anyone may see (hashtags.ts).
 */
export async function updateProfile(db: Db, fanout: Pick<Fanout, 'notify'>, userId: number, input: UpdateProfile, now: Date): Promise<UserProfile> {
  const changes: Partial<typeof users.$inferInsert> = {}
  if (input.full_name !== undefined) changes.fullName = input.full_name
  if (input.bio !== undefined) changes.bio = input.bio
  if (input.avatar !== undefined) changes.avatar = input.avatar
  // A new picture (or none) starts without a description unless one comes with it.
  if (input.avatar_alt !== undefined) changes.avatarAlt = input.avatar_alt
  else if (input.avatar !== undefined) changes.avatarAlt = ''
  let followed = 0
  if (Object.keys(changes).length > 0 || input.is_private !== undefined) {
    await writeTransaction(db, async (tx) => {
      if (input.avatar) await assertOwnUpload(tx, userId, input.avatar)
      if (input.avatar_alt) {
        const [avatar] = await tx.values<[string]>(sql`select avatar from ${users} where id = ${userId}`)
        if ((input.avatar ?? avatar[0]) === '') throw new TRPCError({ code: 'BAD_REQUEST', message: 'avatar_alt describes an avatar: set one first' })
      }
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
