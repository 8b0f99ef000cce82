/**
 * A post's images and videos (a carousel, up to MEDIA_MAX) with their alt text. The column
 * `posts.media` keeps the items in order, each `[path, alt, width, height, blurhash, poster, mime]`:
 * what its upload recorded (media.ts), copied when the post is written. An upload's metadata never
 * changes after it is stored, so a page of posts answers every item, and the post's `image` (the
 * first item's path, which clients that know only the spec's `image` read), from its own row, with
 * no lookup. An item stored as `[path, alt]` (posts written before migration 0023 whose upload was
 * not found then) is looked up with the page's avatars, in the page's one query. A post with no
 * image stores nothing (null); so does one whose lone image has no alt text and no recorded upload.
 */
import type { PostMedia } from '../../shared/types.js'
import { mediaOf, type MediaInfo, type MediaMap } from './media.js'

/** One stored item: the upload's path and its alt text, then what its upload recorded. */
export type StoredMediaItem =
  | [path: string, alt: string]
  | [path: string, alt: string, width: number | null, height: number | null, blurhash: string | null, poster: string | null, mime: string | null]

/** What an item's upload recorded, when the item carries it. */
function recordedOf(item: StoredMediaItem): MediaInfo | undefined {
  return item.length === 7 ? { width: item[2], height: item[3], blurhash: item[4], poster: item[5], mime: item[6] } : undefined
}

/**
 * The column's value for a post made or edited with these items, each with what `recorded` holds of
 * its upload: null when there is no item, or when a lone item without alt text has nothing recorded.
 */
export function mediaColumn(items: ReadonlyArray<{ path: string; alt: string }>, recorded: MediaMap): string | null {
  const stored = items.map(({ path, alt }): StoredMediaItem => {
    const info = recorded.get(path)
    return info ? [path, alt, info.width, info.height, info.blurhash, info.poster, info.mime] : [path, alt]
  })
  if (stored.length === 0 || (stored.length === 1 && stored[0].length === 2 && stored[0][1] === '')) return null
  return JSON.stringify(stored)
}

/** The items of a post, from its column, or its `image` alone. */
export function storedMedia(column: string | null, image: string): StoredMediaItem[] {
  if (column !== null) return JSON.parse(column) as StoredMediaItem[]
  return image === '' ? [] : [[image, '']]
}

/** What the items of `column` recorded of their uploads, by path (for an edit that keeps them). */
export function recordedMedia(column: string | null, image: string): MediaMap {
  const recorded = new Map<string, MediaInfo>()
  for (const item of storedMedia(column, image)) {
    const info = recordedOf(item)
    if (info) recorded.set(item[0], info)
  }
  return recorded
}

/** Every upload path a post shows (its items; `image` is the first). */
export function postMediaPaths(post: { media: string | null; image: string }): string[] {
  return storedMedia(post.media, post.image).map((item) => item[0])
}

/** The paths of items (storedMedia's) that carry nothing recorded: what the page's media lookup must find. */
export function unrecordedPaths(items: readonly StoredMediaItem[]): string[] {
  const paths: string[] = []
  for (const item of items) if (item.length !== 7) paths.push(item[0])
  return paths
}

/** unrecordedPaths of a post's column. */
export function unrecordedMediaPaths(post: { media: string | null; image: string }): string[] {
  return unrecordedPaths(storedMedia(post.media, post.image))
}

/** What is known of a post's `image` (`items`: storedMedia's): its first item's record, or the page's lookup. */
export function postImageInfo(items: readonly StoredMediaItem[], image: string, media: MediaMap): MediaInfo | undefined {
  if (image === '') return undefined
  const first = items[0]
  return (first?.[0] === image ? recordedOf(first) : undefined) ?? mediaOf(media, image)
}

/** The `type` of an answer's item: the first part of its upload's MIME type, when that is image or video. */
function mediaType(mime: string | null): PostMedia['type'] {
  if (mime === null) return null
  const slash = mime.indexOf('/')
  const kind = slash < 0 ? mime : mime.slice(0, slash)
  return kind === 'image' || kind === 'video' ? kind : null
}

/** One item of an answer's `media`, as one object literal (the same keys in the same order for every item). */
function mediaAnswer(path: string, alt: string, width: number | null, height: number | null, blurhash: string | null, poster: string | null, mime: string | null): PostMedia {
  return { path, alt, type: mediaType(mime), width, height, blurhash, poster_url: poster }
}

/** The `media` of an answer (`items`: storedMedia's): each item with what its upload recorded (null where nothing was). */
export function toPostMedia(items: readonly StoredMediaItem[], media: MediaMap): PostMedia[] {
  return items.map((item) => {
    if (item.length === 7) return mediaAnswer(item[0], item[1], item[2], item[3], item[4], item[5], item[6])
    const info = mediaOf(media, item[0])
    return mediaAnswer(item[0], item[1], info?.width ?? null, info?.height ?? null, info?.blurhash ?? null, info?.poster ?? null, info?.mime ?? null)
  })
}
