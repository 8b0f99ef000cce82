import { z } from 'zod'
import { userRef } from './common.js'

/** Without `user_id` the caller's own profile; `user_id` may also be a username. */
export const profileInput = z.object({ user_id: userRef.optional() }).default({})
export type ProfileInput = z.input<typeof profileInput>
