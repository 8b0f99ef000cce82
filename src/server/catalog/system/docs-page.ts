/**
 * GET /docs: the API reference, written on the server from the OpenAPI document (docs-html.ts), so
 * it reads at once, script or no script; its style sheet is in the page (allowed by its hash: no
 * request holds up the first paint), and GET /docs/{asset} serves the script that adds "Try it"
 * (docs-assets.ts). The page's Content-Security-Policy allows nothing but this server, so no
 * request leaves the machine.
 */
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { TRPCError } from '@trpc/server'
import { z } from 'zod'
import type { Exchange } from '../../rest/adapter.js'
import { DOCS_SCRIPT, DOCS_STYLE } from './docs-assets.js'
import { renderDocsPage } from './docs-html.js'
import { isFresh, openApiDocument } from './openapi.js'

const digest = (text: string | Buffer) => createHash('sha256').update(text).digest('base64url').slice(0, 16)

interface Served {
  type: string
  body: Buffer
  /** The body gzipped, for clients that accept it (the page shrinks about tenfold). */
  gzipped: Buffer
  etag: string
}

const serve = async (type: string, text: string): Promise<Served> => {
  const body = Buffer.from(text)
  return { type, body, gzipped: await promisify(gzip)(body), etag: `"${digest(body)}"` }
}

const ASSETS = {
  'plaza-docs.js': { type: 'text/javascript; charset=utf-8', text: DOCS_SCRIPT },
} as const
type AssetName = keyof typeof ASSETS

/** Path input of `GET /docs/:asset?`: the page itself, or its script. */
export const docsPageInput = z.object({
  asset: z
    .enum(Object.keys(ASSETS) as [AssetName, ...AssetName[]])
    .optional()
    .describe('A file of the page: its script, which adds "Try it"; omitted for the page'),
})

/** Files are linked with their content's hash, so a browser keeps them until they change. */
const assetUrl = (name: AssetName) => `/docs/${name}?v=${digest(ASSETS[name].text)}`

let assets: Map<AssetName, Promise<Served>> | undefined
let page: Promise<Served> | undefined

/** Written (and gzipped) once per process, on first request: the document does not change while the server runs. */
function pageOnce(): Promise<Served> {
  page ??= openApiDocument().then(({ document }) => serve('text/html; charset=utf-8', renderDocsPage(document, { style: DOCS_STYLE, script: assetUrl('plaza-docs.js') })))
  page.catch(() => (page = undefined))
  return page
}

/**
 * Only this server, for everything: the script is a file, the one inline style sheet is allowed by
 * its hash (no other inline style runs); images and audio shown by "Try it" are blobs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  `style-src 'sha256-${createHash('sha256').update(DOCS_STYLE).digest('base64')}'`,
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS = { 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }

const acceptsGzip = (header: string | undefined) => /\bgzip\b(?!;\s*q=0(\.0*)?\b)/i.test(header ?? '')

function send({ req, res }: Pick<Exchange, 'req' | 'res'>, served: Served, cacheControl: string) {
  const headers = { etag: served.etag, 'cache-control': cacheControl, vary: 'accept-encoding', ...SECURITY_HEADERS }
  if (isFresh(req.headers['if-none-match'], served.etag)) {
    res.writeHead(304, headers)
    res.end()
    return
  }
  const compressed = acceptsGzip(req.headers['accept-encoding'])
  const payload = compressed ? served.gzipped : served.body
  res.writeHead(200, { ...headers, 'content-type': served.type, 'content-length': payload.length, ...(compressed && { 'content-encoding': 'gzip' }) })
  res.end(payload)
}

/**
 * `GET /docs`: the page, revalidated on every load (a 304 while the server has not changed).
 * `GET /docs/{asset}`: its files, and nothing else of the server's.
 */
export async function handleDocsPage(exchange: Exchange): Promise<void> {
  const input = docsPageInput.safeParse(exchange.params)
  if (!input.success) throw new TRPCError({ code: 'NOT_FOUND', message: `Not found: /docs/${exchange.params.asset}` })
  const name = input.data.asset
  if (!name) return send(exchange, await pageOnce(), 'no-cache')
  assets ??= new Map()
  if (!assets.has(name)) assets.set(name, serve(ASSETS[name].type, ASSETS[name].text))
  send(exchange, await assets.get(name)!, 'public, max-age=31536000, immutable')
}
