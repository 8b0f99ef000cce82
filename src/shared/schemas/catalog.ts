/**
 * The utility catalog's own system operations: `GET /api/list` (its filters and its answer) and
 * `GET /api/uptime`. Shared by the handlers and `plaza util list`.
 */
import { z } from 'zod'

/** The catalog's groups (decisions §6), spelled as the original catalog spells them, in its order. */
export const CATALOG_GROUPS = [
  'system',
  'Tools',
  'Image',
  'music',
  'Image Processing',
  'Media',
  'AI',
  'LLM',
  'NSFW',
  'Audio',
  'Weather',
  'Maker',
  'IMAGE-GENERATORS',
  'Anime',
] as const
export type CatalogGroup = (typeof CATALOG_GROUPS)[number]

/** The reason `GET /api/list` gives for a row that will be offered once it is built. */
export const NOT_BUILT_YET = 'not built yet'

export const CATALOG_BACKENDS = ['local', 'provider', 'gateway'] as const

/** A group named in any letter case (`image-generators`, `ai`), read as its catalog spelling. */
const group = z
  .string({ error: 'group must be a string' })
  .transform((value, context) => {
    const found = CATALOG_GROUPS.find((name) => name.toLowerCase() === value.trim().toLowerCase())
    if (!found) context.addIssue({ code: 'custom', message: `group must be one of: ${CATALOG_GROUPS.join(', ')}` })
    return found ?? z.NEVER
  })

/** A query-string boolean: only the words `true` and `false`. */
const offered = z.enum(['true', 'false'], { error: 'offered must be true or false' }).transform((value) => value === 'true')

/** `GET /api/list?group=&offered=`: both filters optional. */
export const catalogListInput = z.object({ group: group.optional(), offered: offered.optional() })
export type CatalogListInput = z.input<typeof catalogListInput>
export type CatalogListFilter = z.output<typeof catalogListInput>

/** One row of `GET /api/list`. */
export const catalogEntry = z.object({
  group: z.enum(CATALOG_GROUPS),
  /** Null for an operation that is never offered and so has no path. */
  method: z.enum(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']).nullable(),
  path: z.string().nullable(),
  summary: z.string(),
  offered: z.boolean(),
  backend: z.enum(CATALOG_BACKENDS),
  /** Whether what backs it is set up on this server (always true for local operations). */
  configured: z.boolean(),
  /** Why an operation is not offered: never (decisions §5), or not built yet. */
  reason: z.string().optional(),
  /** What a local operation lacks here: its optional package, and the command that installs it. */
  missing: z.string().optional(),
})
export type CatalogEntry = z.infer<typeof catalogEntry>

export const catalogListAnswer = z.object({ message: z.string(), operations: z.array(catalogEntry) })
export type CatalogListAnswer = z.infer<typeof catalogListAnswer>

/** `GET /api/uptime`; both instants are the API's date-time (UTC `YYYY-MM-DD HH:MM:SS`). */
export const uptimeAnswer = z.object({
  message: z.string(),
  started_at: z.string(),
  /** Whole seconds since `started_at`. */
  uptime_seconds: z.number().int().nonnegative(),
  now: z.string(),
})
export type UptimeAnswer = z.infer<typeof uptimeAnswer>
