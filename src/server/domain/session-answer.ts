import { formatDateTime } from '../../shared/dates.js'
import type { Session } from '../../shared/types.js'
import type { AuthUser } from '../auth/sessions.js'
import type { Db, Tx } from '../db/client.js'
import { withMediaOne } from './media.js'
import { toSessionUser } from './views.js'

/** A Session answer (register, login, refresh, the second step of a two-factor login) for a token just issued. */
export async function sessionOf(db: Db | Tx, user: Omit<AuthUser, 'suspendedAt'>, issued: { token: string; expiresAt: number }): Promise<Session> {
  return { token: issued.token, expires_at: formatDateTime(issued.expiresAt), user: await withMediaOne(db, toSessionUser(user)) }
}
