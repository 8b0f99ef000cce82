/**
 * Users' reports of posts, comments, stories and users (POST /reports). A moderator acts on them
 * with the operator commands (domain/moderation.ts).
 */
import { TRPCError } from '@trpc/server'
import { sql } from 'drizzle-orm'
import { formatDateTime } from '../../shared/dates.js'
import type { CreateReport, ReportTargetType } from '../../shared/schemas/reports.js'
import type { Report } from '../../shared/types.js'
import { writeTransaction, type Db, type Tx } from '../db/client.js'
import { visibleTo } from './posts.js'
import { storyVisibleTo } from './stories.js'

const NOT_FOUND: Record<ReportTargetType, string> = {
  post: 'Post not found',
  comment: 'Comment not found',
  story: 'Story not found',
  user: 'User not found',
}

/**
 * The user behind a target the reporter can see, by the rules of reading it: a post or a comment's
 * post by the visibility rule of posts.ts, a story while it is live and, when followers-only, for
 * followers; any user. Undefined when it does not exist or the reporter may not see it (one 404
 * for both, so a report never reveals what the reporter cannot read).
 */
async function targetAuthor(tx: Tx, reporterId: number, type: ReportTargetType, id: number, now: number): Promise<number | undefined> {
  const query = {
    post: sql`select posts.user_id from posts where posts.id = ${id} and ${visibleTo(reporterId)}`,
    comment: sql`select c.user_id from comments c join posts on posts.id = c.post_id where c.id = ${id} and ${visibleTo(reporterId)}`,
    story: sql`select stories.user_id from stories where stories.id = ${id} and ${storyVisibleTo(reporterId, now)}`,
    user: sql`select id from users where id = ${id}`,
  }[type]
  const [row] = await tx.values<[number]>(query)
  return row?.[0]
}

/**
 * Files a report. One open report per reporter and target (`reports_open_idx`): a second one is a
 * 409 until a moderator resolves the first. The target's author is stored with it, as whom a
 * `suspend` acts on, even if the content is removed later.
 */
export async function createReport(db: Db, reporterId: number, input: CreateReport, now: Date): Promise<{ report: Report }> {
  const createdAt = now.getTime()
  return writeTransaction(db, async (tx) => {
    const authorId = await targetAuthor(tx, reporterId, input.target_type, input.target_id, createdAt)
    if (authorId === undefined) throw new TRPCError({ code: 'NOT_FOUND', message: NOT_FOUND[input.target_type] })
    if (authorId === reporterId) {
      throw new TRPCError({ code: 'BAD_REQUEST', message: input.target_type === 'user' ? 'You cannot report yourself' : 'You cannot report your own content' })
    }
    // No conflict target: the partial unique index reports_open_idx is the only one a new row can hit.
    const [row] = await tx.values<[number]>(sql`
      insert into reports (reporter_id, target_type, target_id, target_user_id, reason, note, status, created_at)
      values (${reporterId}, ${input.target_type}, ${input.target_id}, ${authorId}, ${input.reason}, ${input.note}, 'open', ${createdAt})
      on conflict do nothing returning id`)
    if (!row) throw new TRPCError({ code: 'CONFLICT', message: 'You have already reported this; your report is still open' })
    return {
      report: {
        id: row[0],
        target_type: input.target_type,
        target_id: input.target_id,
        reason: input.reason,
        note: input.note,
        status: 'open',
        created_at: formatDateTime(createdAt),
      },
    }
  })
}
