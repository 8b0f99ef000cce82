import { z } from 'zod'

/** Alt text's longest (a media item's, an avatar's), as Mastodon's 1,500. */
export const ALT_MAX = 1500

/** Pagination of every list (decisions §3): page default 1, limit default 20, clamped to 50. */
export const PAGE_LIMIT_DEFAULT = 20
export const PAGE_LIMIT_MAX = 50

const positiveInt = (name: string) =>
  z.coerce.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).positive(`${name} must be at least 1`)

export const pagination = {
  page: positiveInt('page').default(1),
  limit: positiveInt('limit')
    .default(PAGE_LIMIT_DEFAULT)
    .transform((n) => Math.min(n, PAGE_LIMIT_MAX)),
}
export const paginationInput = z.object(pagination)
export type PaginationInput = z.input<typeof paginationInput>

/**
 * A field a route knows but cannot apply (`username` on a profile update): present, it is a 400
 * whose message names it and says which route can, or that none does (`why` begins with the field's
 * name). A field a route does not know at all is ignored instead, since apps of other versions send
 * them. In the OpenAPI document it is a property that admits no value (`not: {}`).
 */
export const refused = (why: string) => z.never({ error: why }).describe(`Refused: ${why}`).optional()

/** A numeric id, from a JSON number or a path segment. */
export const id = (name: string) => positiveInt(name)

/** Media fields reference uploaded files only: `uploads/<kind>/<name>.<ext>`, nothing that can leave that folder. */
export const UPLOAD_PATH_PATTERN = /^uploads\/(avatars|posts|stories|comments)\/[A-Za-z0-9_-]{8,128}\.(jpg|png|webp|gif|mp4|webm)$/
export const uploadPath = (kinds: ReadonlyArray<'avatars' | 'posts' | 'stories' | 'comments'>) =>
  z
    .string()
    .regex(UPLOAD_PATH_PATTERN, 'must be a path returned by an upload (uploads/...)')
    .refine((p) => kinds.includes(p.split('/')[1] as never), `must be an upload of kind ${kinds.join(' or ')}`)

/** Optional media: a missing value, null or an empty string all mean "none". */
export const optionalUploadPath = (kinds: ReadonlyArray<'avatars' | 'posts' | 'stories' | 'comments'>) =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), uploadPath(kinds).optional())

export const USERNAME_PATTERN = /^[A-Za-z0-9_.]{3,30}$/
export const username = z
  .string({ error: 'username is required' })
  .trim()
  .regex(USERNAME_PATTERN, 'username must be 3 to 30 letters, digits, _ or .')

/** A user named by numeric id or by username (the CLI and profile paths take either). */
export const userRef = z.union([id('user_id'), username])

/** Alt text: what a screen reader says for an image or a video; trimmed, `null` is none. */
export const altText = (name: string) =>
  z.preprocess((v) => (v === null ? '' : v), z.string({ error: `${name} must be a string` }).trim().max(ALT_MAX, `${name} must be at most ${ALT_MAX} characters`))
