/**
 * Image metadata on the objects that show images (issue 13): each image field gets its width,
 * height and BlurHash as siblings (`image_width`, `avatar_blurhash`, ...; a story's `media_url`
 * gets `media_*` and its video's `poster_url`), read from what the upload recorded. A page is
 * mapped first, then `withMedia` looks up every path on it in one prepared query on the unique
 * `uploads_path_idx`, so a list costs one extra indexed query per page, whatever its length.
 */
import { sql } from 'drizzle-orm'
import type { ImageMeta, StoryMedia } from '../../shared/types.js'
import { prepared, type AnyDb } from '../db/prepared.js'
import { uploads } from '../db/schema.js'

/** The image fields of the API's objects and the prefix of their siblings. */
const IMAGE_FIELDS = { image: 'image', avatar: 'avatar', actor_avatar: 'actor_avatar', post_image: 'post_image', media_url: 'media' } as const
type ImageField = keyof typeof IMAGE_FIELDS
type Prefix = (typeof IMAGE_FIELDS)[ImageField]

/** Every sibling key withMedia adds. */
export type MediaKey = `${Prefix}_${'width' | 'height' | 'blurhash'}` | 'poster_url'

/** An API object as its mapping builds it, before withMedia adds its image metadata. */
export type Bare<T> = Omit<T, MediaKey>

type If<T, F extends string, R> = F extends keyof T ? R : unknown

/** `T` with the siblings of each image field it has. */
export type WithMedia<T> = T &
  If<T, 'image', ImageMeta<'image'>> &
  If<T, 'avatar', ImageMeta<'avatar'>> &
  If<T, 'actor_avatar', ImageMeta<'actor_avatar'>> &
  If<T, 'post_image', ImageMeta<'post_image'>> &
  If<T, 'media_url', StoryMedia>

/** What the uploads table recorded of one stored file. */
export interface MediaInfo {
  width: number | null
  height: number | null
  blurhash: string | null
  poster: string | null
  /** The upload's sniffed type (`image/jpeg`, `video/mp4`, ...): a post's media item says image or video. */
  mime: string | null
}

export type MediaMap = ReadonlyMap<string, MediaInfo>

/**
 * The paths as a JSON array, the rows as one JSON text: one prepared statement whatever the page's
 * length, and one value handed over rather than a row each (as posts.ts's page of posts: the
 * binding's per-row iteration cost more than the lookup, about 50 µs of an explore answer's 0.7 ms
 * of CPU on the 100k-post network).
 */
const uploadsByPaths = prepared((db) =>
  db
    .select({ rows: sql<string>`json_group_array(json_array(${uploads.path}, ${uploads.width}, ${uploads.height}, ${uploads.blurhash}, ${uploads.poster}, ${uploads.mime}))` })
    .from(uploads)
    .where(sql`${uploads.path} in (select value from json_each(${sql.placeholder('paths')}))`)
    .prepare(),
)

type UploadValues = [string, number | null, number | null, string | null, string | null, string | null]

/** The recorded metadata of each path that names an upload; no query at all when there is no path. */
export async function mediaInfo(db: AnyDb, paths: Iterable<string>): Promise<MediaMap> {
  const wanted = [...new Set(paths)].filter((path) => path !== '')
  if (wanted.length === 0) return new Map()
  const row = (await uploadsByPaths(db).get({ paths: JSON.stringify(wanted) })) as { rows: string } | undefined
  const media = new Map<string, MediaInfo>()
  for (const [path, width, height, blurhash, poster, mime] of JSON.parse(row?.rows ?? '[]') as UploadValues[]) media.set(path, { width, height, blurhash, poster, mime })
  return media
}

/** What was recorded of the file at `path` ('' is no file): for builders that write the siblings themselves (posts.ts toPostWithMedia). */
export function mediaOf(media: MediaMap, path: string): MediaInfo | undefined {
  return path !== '' && media.size > 0 ? media.get(path) : undefined
}

/** Every image path the objects show, for one mediaInfo lookup. */
export function mediaPaths(items: readonly object[]): string[] {
  const paths: string[] = []
  for (const item of items) {
    for (const key in item) {
      const value = (item as Record<string, unknown>)[key]
      if (Object.hasOwn(SIBLINGS, key) && typeof value === 'string' && value !== '') paths.push(value)
    }
  }
  return paths
}

/**
 * Each image field's sibling keys, built once: the mapping runs for every row of every page, and
 * building the key strings there (and an entries array per object) cost a tenth of a page's CPU.
 */
const SIBLINGS: Readonly<Record<string, readonly [string, string, string]>> = Object.fromEntries(
  Object.entries(IMAGE_FIELDS).map(([field, prefix]) => [field, [`${prefix}_width`, `${prefix}_height`, `${prefix}_blurhash`] as const]),
)

/**
 * A copy of `item` with each image field's siblings placed right after it: null when the field
 * is empty or its file has nothing recorded (uploaded before metadata was kept).
 */
export function attachMedia<T extends object>(media: MediaMap, item: T): WithMedia<T> {
  const out: Record<string, unknown> = {}
  for (const key in item) {
    const value = (item as Record<string, unknown>)[key]
    out[key] = value
    const siblings = Object.hasOwn(SIBLINGS, key) ? SIBLINGS[key] : undefined
    if (!siblings) continue
    const info = typeof value === 'string' && value !== '' && media.size > 0 ? media.get(value) : undefined
    out[siblings[0]] = info?.width ?? null
    out[siblings[1]] = info?.height ?? null
    out[siblings[2]] = info?.blurhash ?? null
    if (key === 'media_url') out.poster_url = info?.poster ?? null
  }
  return out as WithMedia<T>
}

/** The objects of one page with their image metadata: one indexed query for the whole page. */
export async function withMedia<T extends object>(db: AnyDb, items: readonly T[]): Promise<WithMedia<T>[]> {
  const media = await mediaInfo(db, mediaPaths(items))
  return items.map((item) => attachMedia(media, item))
}

/** withMedia for a single object (a detail, a created post, a profile). */
export async function withMediaOne<T extends object>(db: AnyDb, item: T): Promise<WithMedia<T>> {
  return (await withMedia(db, [item]))[0]
}
