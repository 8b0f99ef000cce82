/** `GET /api/fakepost` (docs/maker.md): a social-post card, always marked as generated. */
import { z } from 'zod'

export const FAKEPOST_TEXT_MAX = 1000
export const FAKEPOST_COUNT_MAX = 999_999_999_999

const flag = (field: string) =>
  z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', ''].includes(v), `${field} must be true or false`)
    .transform((v) => v === 'true' || v === '1' || v === 'yes')

const count = (field: string) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,12}$/, `${field} must be a whole number from 0 to ${FAKEPOST_COUNT_MAX}`)
    .transform(Number)
    .default(0)
    .describe(`the ${field} count, shown abbreviated (1.2K, 3.4M)`)

/** `GET /api/fakepost?text=&username=&name=&avatar=&verified=&likes=&replies=&reposts=&theme=&time=`. */
export const fakepostInput = z.object({
  text: z
    .string({ error: 'text is required' })
    .refine((t) => t.trim().length > 0, 'text is required')
    .refine((t) => [...t].length <= FAKEPOST_TEXT_MAX, `text is longer than ${FAKEPOST_TEXT_MAX} characters`)
    .describe(`the post, at most ${FAKEPOST_TEXT_MAX} characters; emoji in colour, CJK supported, new lines kept`),
  username: z
    .string({ error: 'username is required' })
    .transform((u) => u.trim().replace(/^@/, ''))
    .refine((u) => /^[A-Za-z0-9_.]{1,30}$/.test(u), 'username must be 1 to 30 letters, digits, _ or . (without the @)')
    .describe('the handle, shown as @username'),
  name: z
    .string()
    .transform((n) => n.trim())
    .refine((n) => [...n].length <= 50, 'name is longer than 50 characters')
    .optional()
    .describe('the display name (default: the username)'),
  avatar: z.string().trim().min(1, 'avatar is empty').max(2048, 'avatar is longer than 2048 characters').optional().describe('the avatar: an http(s) URL or an uploads/... path of this server (default: initials on a colour)'),
  verified: flag('verified').default(false).describe('draw the verified mark (true/false)'),
  likes: count('likes'),
  replies: count('replies'),
  reposts: count('reposts'),
  theme: z.enum(['light', 'dark'], { error: 'theme must be light or dark' }).default('light').describe('light (default) or dark'),
  time: z
    .string()
    .transform((t) => t.trim())
    .refine((t) => [...t].length <= 64, 'time is longer than 64 characters')
    .optional()
    .describe('the time line as shown, such as "9:41 AM · Nov 23, 2026" (default: now, UTC)'),
})
export type FakepostInput = z.output<typeof fakepostInput>
