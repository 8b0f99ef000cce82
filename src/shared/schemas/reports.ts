import { z } from 'zod'
import { id } from './common.js'

export const REPORT_TARGET_TYPES = ['post', 'comment', 'story', 'user'] as const
export type ReportTargetType = (typeof REPORT_TARGET_TYPES)[number]

/**
 * The reasons an app offers as choices, close to the categories the app stores ask for (spam,
 * harassment, hate, violence, nudity, self-harm, illegal goods or acts); anything else is `other`
 * with a note.
 */
export const REPORT_REASONS = ['spam', 'harassment', 'hate', 'violence', 'nudity', 'self_harm', 'illegal', 'other'] as const
export type ReportReason = (typeof REPORT_REASONS)[number]

/** Longest report note, and longest note a moderator may attach to an action. */
export const REPORT_NOTE_MAX = 1000

/** How a moderator resolves a report; `unsuspend` exists only as a direct action. */
export const REPORT_RESOLUTIONS = ['dismiss', 'remove', 'suspend'] as const
export type ReportResolution = (typeof REPORT_RESOLUTIONS)[number]
export type ModerationActionKind = ReportResolution | 'unsuspend'

const note = z.preprocess(
  (v) => (v === null || v === undefined ? '' : v),
  z
    .string({ error: 'note must be a string' })
    .trim()
    .max(REPORT_NOTE_MAX, `note must be at most ${REPORT_NOTE_MAX} characters`),
)

export const createReportInput = z.object({
  target_type: z.enum(REPORT_TARGET_TYPES, { error: `target_type must be one of ${REPORT_TARGET_TYPES.join(', ')}` }),
  target_id: id('target_id'),
  reason: z.enum(REPORT_REASONS, { error: `reason must be one of ${REPORT_REASONS.join(', ')}` }),
  note,
})
export type CreateReportInput = z.input<typeof createReportInput>
export type CreateReport = z.output<typeof createReportInput>

/** Who acts (the operator's name, recorded with the action) and why, for the operator commands. */
export const moderationByInput = z.object({
  moderator: z
    .string({ error: 'moderator is required' })
    .trim()
    .min(1, 'moderator must not be empty')
    .max(100, 'moderator must be at most 100 characters'),
  note,
})
export type ModerationBy = z.output<typeof moderationByInput>
