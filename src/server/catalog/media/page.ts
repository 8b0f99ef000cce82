/**
 * Reads what a page says about itself (docs/media.md#sources): OpenGraph `og:*` and Twitter
 * `twitter:*` meta tags, `<title>`, the description and author meta tags, `<link rel=canonical>`,
 * `<base href>` and oEmbed discovery (`<link rel=alternate type=application/json+oembed>`).
 * htmlparser2 parses the bytes as they arrive, a chunk at a time, and the reading stops at the end
 * of `<head>` or at the byte bound, whichever comes first: a page is never read whole.
 */
import { TRPCError } from '@trpc/server'
import { Parser } from 'htmlparser2'
import type { ErrorCases } from '../../errors.js'
import type { GuardedResponse } from '../../fetch-guard.js'

/** What reading a page (and its oEmbed answer, oembed.ts) can answer beyond the fetch's refusals. */
export const PAGE_ERRORS: ErrorCases = {
  415: 'The URL is not an HTML page',
  422: 'The page is empty, or its oEmbed answer is too large or not oEmbed JSON',
}

export interface PageMeta {
  /** `og:*` properties, the first value of each (lower-case keys such as `og:image:secure_url`). */
  og: Record<string, string>
  /** `twitter:*` names or properties, the first value of each. */
  twitter: Record<string, string>
  /** Plain meta tags: `description`, `author`. */
  meta: Record<string, string>
  title: string | null
  /** As written in the page (resolve with `resolveIn`). */
  canonical: string | null
  base: string | null
  /** The JSON oEmbed endpoint the page names, as written. */
  oembed: string | null
}

const PLAIN_META = new Set(['description', 'author'])

/** Collects a page's metadata from the HTML fed to it, and says when nothing more is worth reading. */
export class PageParser {
  readonly meta: PageMeta = { og: {}, twitter: {}, meta: {}, title: null, canonical: null, base: null, oembed: null }
  /** The head ended (or the body began): what follows never holds the tags read here. */
  done = false
  private inTitle = 0
  private titleText = ''
  private readonly parser: Parser

  constructor() {
    this.parser = new Parser(
      {
        onopentag: (name, attributes) => this.open(name, attributes),
        ontext: (text) => {
          if (this.inTitle && this.meta.title === null) this.titleText += text
        },
        onclosetag: (name) => {
          if (this.done) return
          if (name === 'title' && this.inTitle) {
            this.inTitle--
            if (this.meta.title === null) this.meta.title = collapse(this.titleText) || null
          }
          if (name === 'head') this.finish()
        },
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    )
  }

  private open(name: string, attributes: Record<string, string>) {
    if (this.done) return
    if (name === 'body') return this.finish()
    if (name === 'title' && this.meta.title === null) {
      this.inTitle++
      this.titleText = ''
    } else if (name === 'meta') {
      const key = (attributes.property ?? attributes.name ?? '').trim().toLowerCase()
      const content = attributes.content
      if (!key || content === undefined) return
      const value = collapse(content)
      if (!value) return
      const store = key.startsWith('og:') ? this.meta.og : key.startsWith('twitter:') ? this.meta.twitter : PLAIN_META.has(key) ? this.meta.meta : null
      if (store && !(key in store)) store[key] = value
    } else if (name === 'link') {
      const rel = (attributes.rel ?? '').toLowerCase().split(/\s+/)
      const href = attributes.href?.trim()
      if (!href) return
      if (rel.includes('canonical') && this.meta.canonical === null) this.meta.canonical = href
      if (rel.includes('alternate') && (attributes.type ?? '').trim().toLowerCase() === 'application/json+oembed' && this.meta.oembed === null) this.meta.oembed = href
    } else if (name === 'base' && this.meta.base === null && attributes.href?.trim()) this.meta.base = attributes.href.trim()
  }

  private finish() {
    this.done = true
    this.parser.pause()
  }

  write(text: string) {
    if (!this.done) this.parser.write(text)
  }

  end(): PageMeta {
    if (!this.done) this.parser.end()
    if (this.inTitle && this.meta.title === null) this.meta.title = collapse(this.titleText) || null
    return this.meta
  }
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()

/** The character set a Content-Type header names, if any. */
export function charsetOf(contentType: string | null): string | null {
  return contentType ? (/;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1] ?? null) : null
}

/** `<meta charset=...>` or `<meta http-equiv=Content-Type content="...; charset=...">` in the first bytes (the HTML standard's prescan, simplified). */
export function sniffCharset(prefix: Buffer): string | null {
  const text = prefix.subarray(0, 1024).toString('latin1')
  return /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(text)?.[1] ?? null
}

function decoderFor(label: string | null): TextDecoder {
  try {
    return new TextDecoder(label ?? 'utf-8')
  } catch {
    return new TextDecoder('utf-8')
  }
}

/** Whether bytes with no declared type look like HTML (a tag near the start). */
export function looksLikeHtml(prefix: Buffer): boolean {
  const start = prefix.subarray(0, 512).toString('latin1').replace(/^\ufeff|^\xef\xbb\xbf/, '').trimStart().toLowerCase()
  return /^<(!doctype html|html|head|meta|title|link|!--)/.test(start)
}

export const HTML_TYPES = ['text/html', 'application/xhtml+xml']

export interface ReadPage {
  meta: PageMeta
  /** Bytes read before the head ended or the bound was reached. */
  bytesRead: number
  /** The bound cut the page before its head ended. */
  truncated: boolean
}

/**
 * Reads the HTML of `response` up to the end of its head (or the guard's byte bound), decoding it
 * in the charset the header or the page declares. Anything that is not HTML is a 415.
 */
export async function readPage(response: GuardedResponse, field = 'url'): Promise<ReadPage> {
  const mime = response.contentType?.split(';')[0].trim().toLowerCase() || null
  if (mime && !HTML_TYPES.includes(mime)) throw notHtml(field, mime)
  const parser = new PageParser()
  let decoder: TextDecoder | null = null
  let pending: Buffer[] = []
  let pendingSize = 0
  let bytesRead = 0
  let sinceYield = 0
  const start = (prefix: Buffer) => {
    if (!mime && !looksLikeHtml(prefix)) throw notHtml(field, null)
    decoder = decoderFor(charsetOf(response.contentType) ?? sniffCharset(prefix))
  }
  for await (const chunk of response.body) {
    bytesRead += chunk.length
    if (!decoder) {
      // The first KiB decides the charset (and, undeclared, whether this is HTML at all).
      pending.push(chunk)
      pendingSize += chunk.length
      if (pendingSize < 1024) continue
      const prefix = Buffer.concat(pending)
      pending = []
      start(prefix)
      parser.write(decoder!.decode(prefix, { stream: true }))
    } else parser.write((decoder as TextDecoder).decode(chunk, { stream: true }))
    if (parser.done) break
    // Chunks already buffered arrive back to back: every 64 KiB parsed, let other requests run.
    sinceYield += chunk.length
    if (sinceYield >= 64 * 1024) {
      sinceYield = 0
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  if (!decoder) {
    const prefix = Buffer.concat(pending)
    if (prefix.length === 0) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the page is empty` })
    start(prefix)
    parser.write(decoder!.decode(prefix, { stream: true }))
  }
  // Read before end(), which closes the tags left open (the head among them).
  const headEnded = parser.done
  if (!headEnded) parser.write((decoder as unknown as TextDecoder).decode())
  return { meta: parser.end(), bytesRead, truncated: !headEnded && response.truncated() }
}

const notHtml = (field: string, mime: string | null) =>
  new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: `${field}: not an HTML page (${mime ? `the server sent ${mime}` : 'its type was not recognised'})` })

/** `href` resolved against the page (its `<base href>` first), kept only when it is an http(s) URL. */
export function resolveIn(href: string | null | undefined, pageUrl: string, base: string | null = null): string | null {
  if (!href) return null
  try {
    const baseUrl = base ? new URL(base, pageUrl) : new URL(pageUrl)
    const url = new URL(href.trim(), baseUrl.protocol === 'http:' || baseUrl.protocol === 'https:' ? baseUrl : pageUrl)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}
