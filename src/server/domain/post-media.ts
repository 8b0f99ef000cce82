/**
 * A post's images and videos (a carousel, up to MEDIA_MAX) with their alt text. The column
 * `posts.media` keeps `[[path, alt], ...]` in order; the first item's path is also `posts.image`,
 * so clients that know only the spec's `image` keep working. A post with at most its one `image`
 * and no alt text stores nothing there (null): every post made before carousels, and every one
 * made with `image` alone, answers `media` from `image`. Each item's width, height, BlurHash, type
 * and poster frame come from what its upload recorded (media.ts), in the page's one lookup.
 */
import type { PostMedia } from '../../shared/types.js'
import { mediaOf, type MediaMap } from './media.js'

/** One stored item: the upload's path and its alt text. */
export type StoredMediaItem = [path: string, alt: string]

/** The column's value for a post made or edited with these items: null when `image` alone says it all. */
export function mediaColumn(items: ReadonlyArray<{ path: string; alt: string }>): string | null {
  if (items.length === 0 || (items.length === 1 && items[0].alt === '')) return null
  return JSON.stringify(items.map((item) => [item.path, item.alt] satisfies StoredMediaItem))
}

/** The items of a post, from its column, or its `image` alone. */
export function storedMedia(column: string | null, image: string): StoredMediaItem[] {
  if (column !== null) return JSON.parse(column) as StoredMediaItem[]
  return image === '' ? [] : [[image, '']]
}

/** Every upload path a post shows (its items; `image` is the first), for the page's media lookup. */
export function postMediaPaths(post: { media: string | null; image: string }): string[] {
  return storedMedia(post.media, post.image).map((item) => item[0])
}

/** The `media` of an answer: each item with what its upload recorded (null where nothing was). */
export function toPostMedia(post: { media: string | null; image: string }, media: MediaMap): PostMedia[] {
  return storedMedia(post.media, post.image).map(([path, alt]) => {
    const info = mediaOf(media, path)
    const kind = info?.mime?.split('/')[0]
    return {
      path,
      alt,
      type: kind === 'image' || kind === 'video' ? kind : null,
      width: info?.width ?? null,
      height: info?.height ?? null,
      blurhash: info?.blurhash ?? null,
      poster_url: info?.poster ?? null,
    }
  })
}
