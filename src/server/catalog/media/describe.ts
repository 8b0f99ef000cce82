/**
 * What a media URL is (docs/media.md): the known pattern it matches, then, unless told not to
 * fetch, what its page says (oEmbed, OpenGraph, Twitter cards, plain HTML), merged field by field
 * in the order oEmbed > OpenGraph > Twitter > HTML > pattern, with the source of each field kept.
 */
import { TRPCError } from '@trpc/server'
import type { MediaAnswer, MediaSource, MediaType } from '../../../shared/schemas/media.js'
import { guardedRead, parseUrl } from '../../fetch-guard.js'
import { fetchOEmbed, type OEmbed } from './oembed.js'
import { readPage, resolveIn, type PageMeta } from './page.js'
import { matchPattern, type PatternMatch } from './patterns.js'
import { lookup } from '../../../shared/lookup.js'

/** The most of a page's HTML read (its head, in practice, ends well before). */
export const MEDIA_HTML_MAX_BYTES = 512 * 1024

export interface DescribeOptions {
  /** False: the pattern alone, nothing fetched. */
  fetch: boolean
  allowPrivate: boolean
  /** The whole budget for the page and its oEmbed answer. */
  timeoutMs: number
  /** The host that will embed Twitch players (their `parent`). */
  embedParent?: string
  maxHtmlBytes?: number
  resolve?: (hostname: string) => Promise<string[]>
}

/** What was fetched: a page's metadata, or a media file itself (only its headers are read). */
type Fetched = { kind: 'page'; url: string; meta: PageMeta; oembed: OEmbed | null } | { kind: 'file'; url: string; mime: string; type: MediaType }

const FILE_TYPES: Array<[RegExp, MediaType]> = [
  [/^image\//, 'image'],
  [/^video\//, 'video'],
  [/^audio\//, 'audio'],
]

const field = 'url'

async function fetchPage(url: string, options: DescribeOptions, deadline: number, warnings: string[]): Promise<Fetched> {
  const read = await guardedRead(
    url,
    {
      field,
      allowPrivate: options.allowPrivate,
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxHtmlBytes ?? MEDIA_HTML_MAX_BYTES,
      accept: 'text/html, application/xhtml+xml;q=0.9, */*;q=0.5',
      resolve: options.resolve,
    },
    async (response): Promise<Fetched> => {
      const mime = response.contentType?.split(';')[0].trim().toLowerCase() ?? ''
      const file = FILE_TYPES.find(([pattern]) => pattern.test(mime))
      // A link straight to a media file: its headers say what it is, and its bytes are never read.
      if (file) return { kind: 'file', url: response.url, mime, type: file[1] }
      const page = await readPage(response, field)
      if (page.truncated) warnings.push(`the page's head did not end within ${(options.maxHtmlBytes ?? MEDIA_HTML_MAX_BYTES) / 1024} KiB; read that much of it`)
      return { kind: 'page', url: response.url, meta: page.meta, oembed: null }
    },
  )
  if (read.kind === 'page' && read.meta.oembed) {
    const href = resolveIn(read.meta.oembed, read.url, read.meta.base)
    const left = deadline - Date.now()
    if (!href) warnings.push('oembed: the discovery link is not an http(s) URL')
    else if (left < 50) warnings.push('oembed: no time left to fetch it')
    else {
      try {
        read.oembed = await fetchOEmbed(href, { allowPrivate: options.allowPrivate, timeoutMs: left, resolve: options.resolve })
      } catch (error) {
        // The page answered; a broken or refused oEmbed link costs only its own fields.
        if (!(error instanceof TRPCError)) throw error
        warnings.push(error.message)
      }
    }
  }
  return read
}

/** One field's candidates, strongest first: the first with a value wins, and its source is recorded. */
class Merge {
  readonly source: Record<string, MediaSource> = {}
  pick<T>(name: string, candidates: Array<[MediaSource, T | null | undefined]>): T | null {
    for (const [from, value] of candidates) {
      if (value !== null && value !== undefined && value !== '') {
        this.source[name] = from
        return value
      }
    }
    return null
  }
}

const OEMBED_TYPES: Record<string, MediaType> = { video: 'video', photo: 'image' }

function ogType(value: string | undefined): MediaType | null {
  if (!value) return null
  const type = value.toLowerCase()
  if (type.startsWith('video')) return 'video'
  if (type === 'music.song' || type === 'music.radio_station') return 'audio'
  if (type === 'music.album') return 'album'
  if (type === 'music.playlist') return 'playlist'
  if (type === 'profile') return 'profile'
  return null
}

const twitterType = (card: string | undefined): MediaType | null => (card === 'player' ? 'video' : null)

/** The src of the first iframe in a provider's embed HTML. */
const iframeSrc = (html: string | null) => (html ? (/<iframe\b[^>]*?\ssrc\s*=\s*["']([^"']+)["']/i.exec(html)?.[1]?.replace(/&amp;/g, '&') ?? null) : null)

const escapeAttr = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const dimension = (value: string | undefined) => (value && /^\d{1,5}$/.test(value.trim()) && Number(value) > 0 ? Number(value) : null)

function playerHtml(src: string | null, width: number | null, height: number | null): string | null {
  return src ? `<iframe src="${escapeAttr(src)}" width="${width ?? 640}" height="${height ?? 360}" frameborder="0" allow="autoplay; encrypted-media; fullscreen; picture-in-picture" allowfullscreen></iframe>` : null
}

function fileHtml(url: string, type: MediaType): string {
  if (type === 'image') return `<img src="${escapeAttr(url)}" alt="">`
  return `<${type} controls src="${escapeAttr(url)}"></${type}>`
}

function describeType(provider: string | null, type: MediaType) {
  const kind = type === 'link' ? 'page' : type
  return provider ? `${provider} ${kind}` : `A ${kind}`.replace(/^A ([aeiou])/, 'An $1')
}

/** Describes `input` (a user's URL): 400 for a URL the guard refuses, the guard's codes for a page that cannot be read. */
export async function describeMedia(input: string, options: DescribeOptions): Promise<MediaAnswer> {
  const url = parseUrl(input, field)
  const deadline = Date.now() + options.timeoutMs
  const warnings: string[] = []
  let pattern = matchPattern(url, { embedParent: options.embedParent })
  let fetched: Fetched | null = null
  if (options.fetch) {
    try {
      fetched = await fetchPage(url.href, options, deadline, warnings)
    } catch (error) {
      // A known pattern still answers when its platform cannot be reached; a refused address never does.
      if (!pattern || !(error instanceof TRPCError) || error.code === 'BAD_REQUEST') throw error
      warnings.push(error.message)
    }
  }
  const page = fetched?.kind === 'page' ? fetched : null
  const og = page?.meta.og ?? {}
  const tw = page?.meta.twitter ?? {}
  const oe = page?.oembed ?? null
  const pageUrl = fetched?.url ?? url.href
  const at = (href: string | null | undefined) => (page ? resolveIn(href, pageUrl, page.meta.base) : resolveIn(href, pageUrl))

  // A short link (or a page with no pattern of its own) may land on, or name, a URL a pattern knows.
  if (fetched && (!pattern || pattern.id === null)) {
    const better = [fetched.url, at(page?.meta.canonical), at(og['og:url'])].map((href) => (href ? matchPattern(href, { embedParent: options.embedParent }) : null)).find((found) => found?.id)
    if (better) pattern = better
  }
  const p: Partial<PatternMatch> = pattern ?? {}
  const file = fetched?.kind === 'file' ? fetched : null
  const merge = new Merge()

  const title = merge.pick('title', [['oembed', oe?.title], ['opengraph', og['og:title']], ['twitter', tw['twitter:title']], ['html', page?.meta.title]])
  const author = merge.pick('author', [['oembed', oe?.authorName], ['twitter', tw['twitter:creator']], ['html', page?.meta.meta.author], ['pattern', p.author]])
  const authorUrl = merge.pick('author_url', [['oembed', at(oe?.authorUrl)]])
  const provider = merge.pick('provider', [['oembed', oe?.providerName], ['opengraph', og['og:site_name']], ['pattern', p.provider]])
  const siteName = merge.pick('site_name', [['opengraph', og['og:site_name']], ['oembed', oe?.providerName], ['pattern', p.provider]])
  const description = merge.pick('description', [['opengraph', og['og:description']], ['twitter', tw['twitter:description']], ['html', page?.meta.meta.description]])
  const type =
    merge.pick<MediaType>('type', [
      ['oembed', oe?.type ? lookup(OEMBED_TYPES, oe.type) : null],
      ['opengraph', ogType(og['og:type'])],
      ['twitter', twitterType(tw['twitter:card'])],
      ['pattern', p.type],
      ['http', file?.type],
    ]) ?? 'link'
  const thumbnail = merge.pick('thumbnail', [
    ['oembed', at(oe?.thumbnailUrl)],
    ['opengraph', at(og['og:image:secure_url']) ?? at(og['og:image']) ?? at(og['og:image:url'])],
    ['twitter', at(tw['twitter:image']) ?? at(tw['twitter:image:src'])],
    ['pattern', p.thumbnail],
    ['http', file?.type === 'image' ? file.url : null],
  ])
  const ogVideoIsPlayer = /^text\/html/i.test(og['og:video:type'] ?? '')
  const ogVideo = at(og['og:video:secure_url']) ?? at(og['og:video:url']) ?? at(og['og:video'])
  const ogAudio = at(og['og:audio:secure_url']) ?? at(og['og:audio:url']) ?? at(og['og:audio'])
  const embedUrl = merge.pick('embed_url', [
    ['oembed', at(iframeSrc(oe?.html ?? null))],
    ['opengraph', ogVideoIsPlayer ? ogVideo : null],
    ['twitter', at(tw['twitter:player'])],
    ['pattern', p.embedUrl],
  ])
  const width = merge.pick('width', [
    ['oembed', oe?.width],
    ['opengraph', dimension(og['og:video:width'])],
    ['twitter', dimension(tw['twitter:player:width'])],
  ])
  const height = merge.pick('height', [
    ['oembed', oe?.height],
    ['opengraph', dimension(og['og:video:height'])],
    ['twitter', dimension(tw['twitter:player:height'])],
  ])
  const embedHtml = merge.pick('embed_html', [
    ['oembed', oe?.html],
    ['opengraph', ogVideoIsPlayer ? playerHtml(ogVideo, dimension(og['og:video:width']), dimension(og['og:video:height'])) : null],
    ['twitter', playerHtml(at(tw['twitter:player']), dimension(tw['twitter:player:width']), dimension(tw['twitter:player:height']))],
    ['pattern', p.embedHtml],
    ['http', file ? fileHtml(file.url, file.type) : null],
  ])
  const media = merge.pick('media', [
    ['oembed', oe?.type === 'photo' ? at(oe.url) : null],
    ['opengraph', (ogVideoIsPlayer ? null : ogVideo) ?? ogAudio],
    ['twitter', at(tw['twitter:player:stream'])],
    ['http', file?.url],
    [merge.source.embed_url ?? 'pattern', embedUrl],
  ])
  const canonicalUrl = merge.pick('canonical_url', [
    ['html', at(page?.meta.canonical)],
    ['opengraph', at(og['og:url'])],
    ['pattern', p.canonicalUrl],
    ['http', fetched ? fetched.url : null],
  ])
  const id = merge.pick('id', [['pattern', p.id]])

  let message: string
  if (!fetched && !pattern) message = 'No known media pattern matches this URL (not fetched)'
  else message = `${describeType(provider, type)}${title ? `: ${title}` : ''}${fetched ? '' : options.fetch ? ' (from the URL pattern; the page could not be fetched)' : ' (from the URL pattern, not fetched)'}`

  return {
    message,
    url: url.href,
    canonical_url: canonicalUrl,
    provider,
    type,
    id,
    title,
    author,
    author_url: authorUrl,
    description,
    site_name: siteName,
    thumbnail,
    media,
    embed_url: embedUrl,
    embed_html: embedHtml,
    width,
    height,
    fetched: fetched !== null,
    warnings,
    source: merge.source,
  }
}
