/**
 * GET /docs: the interactive API reference, Swagger UI reading /api/openapi.json. Swagger UI's
 * files are served from the installed swagger-ui-dist package (never copied into this repository),
 * and only the few the page uses; with the start-up script served as a file too, the page's
 * Content-Security-Policy allows nothing but this server, so no request leaves the machine.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { TRPCError } from '@trpc/server'
import { z } from 'zod'
import type { Exchange } from '../../rest/adapter.js'

const require = createRequire(import.meta.url)
const swaggerPackage = require.resolve('swagger-ui-dist/package.json')
const SWAGGER_DIR = path.dirname(swaggerPackage)
const SWAGGER_VERSION = (require(swaggerPackage) as { version: string }).version

const TYPES = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', png: 'image/png' } as const

/** The files of swagger-ui-dist the page loads: nothing else of its folder is reachable. */
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'] as const
const INIT_SCRIPT = 'plaza-init.js'

/** Path input of `GET /docs/:asset?`: the page itself, or one of its files. */
export const docsPageInput = z.object({
  asset: z.enum([...SWAGGER_FILES, INIT_SCRIPT]).optional().describe('A file of the page (script, style sheet or icon); omitted for the page'),
})

/**
 * Swagger UI's set-up. `validatorUrl: null` stops its badge request to swagger.io; the document's
 * `servers` is the origin the page came from, so "Try it out" calls this server.
 */
const initScript = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  tryItOutEnabled: true,
  deepLinking: true,
  displayRequestDuration: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
})
`
const INIT_VERSION = createHash('sha256').update(initScript).digest('base64url').slice(0, 12)

/** Files are named with a version, so a browser may keep them until Plaza or Swagger UI changes. */
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Plaza API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css?v=${SWAGGER_VERSION}">
<link rel="icon" type="image/png" sizes="32x32" href="/docs/favicon-32x32.png?v=${SWAGGER_VERSION}">
<link rel="icon" type="image/png" sizes="16x16" href="/docs/favicon-16x16.png?v=${SWAGGER_VERSION}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js?v=${SWAGGER_VERSION}"></script>
<script src="/docs/${INIT_SCRIPT}?v=${INIT_VERSION}"></script>
</body>
</html>
`

/** Only this server, for everything: scripts and styles are files; `data:` images are Swagger UI's icons. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS = { 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }

interface Asset {
  type: string
  body: Buffer
  /** The body gzipped, for clients that accept it (the bundle shrinks from about 1.5 MB to 0.4 MB). */
  gzipped: Buffer
}

const assets = new Map<string, Promise<Asset>>()

/** Read (and compressed) once per process, on first request. */
function loadAsset(name: string): Promise<Asset> {
  let asset = assets.get(name)
  if (!asset) {
    const ext = name.slice(name.lastIndexOf('.') + 1) as keyof typeof TYPES
    asset = (async () => {
      const body = name === INIT_SCRIPT ? Buffer.from(initScript) : await readFile(path.join(SWAGGER_DIR, name))
      return { type: TYPES[ext], body, gzipped: await promisify(gzip)(body) }
    })()
    asset.catch(() => assets.delete(name))
    assets.set(name, asset)
  }
  return asset
}

const acceptsGzip = (header: string | undefined) => /\bgzip\b(?!;\s*q=0(\.0*)?\b)/i.test(header ?? '')

export async function handleDocsPage({ req, res, params }: Exchange): Promise<void> {
  const input = docsPageInput.safeParse(params)
  if (!input.success) throw new TRPCError({ code: 'NOT_FOUND', message: `Not found: /docs/${params.asset}` })
  const { asset } = input.data
  if (!asset) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page), 'cache-control': 'no-cache', ...SECURITY_HEADERS })
    res.end(page)
    return
  }
  const { type, body, gzipped } = await loadAsset(asset)
  const compressed = acceptsGzip(req.headers['accept-encoding'])
  const payload = compressed ? gzipped : body
  res.writeHead(200, {
    'content-type': type,
    'content-length': payload.length,
    'cache-control': 'public, max-age=31536000, immutable',
    vary: 'accept-encoding',
    ...(compressed && { 'content-encoding': 'gzip' }),
    ...SECURITY_HEADERS,
  })
  res.end(payload)
}
