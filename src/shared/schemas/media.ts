/**
 * `GET /api/media` (decisions §6, docs/media.md): what a media URL is, from its shape and from the
 * page it points to. The query schema and the answer's shape, shared by the server and the CLI.
 */
import { z } from 'zod'

export const MEDIA_TYPES = ['video', 'audio', 'image', 'post', 'playlist', 'album', 'profile', 'live', 'link'] as const
export type MediaType = (typeof MEDIA_TYPES)[number]

/** Where an answer's field came from, strongest first (the merge order of docs/media.md). */
export const MEDIA_SOURCES = ['oembed', 'opengraph', 'twitter', 'html', 'http', 'pattern'] as const
export type MediaSource = (typeof MEDIA_SOURCES)[number]

const MAX_URL_LENGTH = 2048

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((text) => ['1', '0', 'true', 'false', 'yes', 'no'].includes(text), 'fetch must be true or false (1 or 0)')
  .transform((text) => ['1', 'true', 'yes'].includes(text))

/** `GET /api/media?url=&fetch=`. The URL itself is checked by the fetch guard's rules (http or https, no credentials). */
export const mediaInput = z.object({
  url: z
    .string({ error: 'url is required' })
    .trim()
    .min(1, 'url is required')
    .max(MAX_URL_LENGTH, `url is longer than ${MAX_URL_LENGTH} characters`)
    .describe('the page or media URL (http or https)'),
  fetch: flag.optional().default(true).describe('false (or 0): answer from the URL pattern alone, fetching nothing'),
})
export type MediaInput = z.infer<typeof mediaInput>

const text = z.string().nullable()

export const mediaAnswer = z.object({
  message: z.string(),
  /** The URL asked about, as parsed. */
  url: z.string(),
  /** The page's own URL: its canonical link, else the URL after redirects, else the pattern's usual form of it. */
  canonical_url: text,
  provider: text,
  type: z.enum(MEDIA_TYPES),
  /** The media's id on its platform (known patterns only). */
  id: text,
  title: text,
  author: text,
  author_url: text,
  description: text,
  site_name: text,
  thumbnail: text,
  /** The media itself where the page names it (og:video, og:audio, an oEmbed photo, a direct file), else the player URL. */
  media: text,
  /** The URL a player `<iframe>` loads. */
  embed_url: text,
  /** Markup that shows the media: the provider's own (oEmbed) or a player iframe. Untrusted third-party HTML: sandbox it. */
  embed_html: text,
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  /** Whether the page was fetched (false with `fetch=false`, or when a known pattern's page could not be fetched). */
  fetched: z.boolean(),
  /** Why the page (or its oEmbed answer) was not read when a known pattern still answers. */
  warnings: z.array(z.string()),
  /** Which source supplied each field that has a value. */
  source: z.record(z.string(), z.enum(MEDIA_SOURCES)),
})
export type MediaAnswer = z.infer<typeof mediaAnswer>
