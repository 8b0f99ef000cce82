/**
 * GET /api/openapi.json: the OpenAPI 3.1 document of every REST path. Built once per process, on
 * the first request (the route tables do not change while the server runs). `servers` is the
 * request's origin, so the reference page's "try it" and generated clients call the server the
 * document came from.
 */
import { createHash } from 'node:crypto'
import { sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import type { OpenApiDocument } from './openapi-document.js'

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16)

let built: Promise<{ document: OpenApiDocument; digest: string }> | undefined

/**
 * Imported on first use rather than at start-up: the endpoints are read from the route tables,
 * and the utility table is itself built from the catalog registry that names this handler.
 */
function buildOnce() {
  built ??= Promise.all([import('./endpoints.js'), import('./openapi-document.js')]).then(([{ listEndpoints }, { buildOpenApiDocument }]) => {
    const document = buildOpenApiDocument(listEndpoints())
    return { document, digest: digest(JSON.stringify(document)) }
  })
  return built
}

/** The document (and its digest), built on first use. */
export function openApiDocument() {
  return buildOnce()
}

/** True when the client's `If-None-Match` holds `etag` (or `*`). */
export function isFresh(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '')
    return value === etag || value === '*'
  })
}

export async function handleOpenApi({ req, res, ctx }: Exchange): Promise<void> {
  const { document, digest: documentDigest } = await buildOnce()
  // One document per process, but `servers` differs by origin: both go into the ETag.
  const etag = `"${documentDigest}-${digest(ctx.origin)}"`
  // Revalidated on every use (cheap: a 304), so a restarted, changed server is seen at once.
  const headers = { etag, 'cache-control': 'no-cache' }
  if (isFresh(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers)
    res.end()
    return
  }
  const { openapi, info, ...rest } = document
  sendJson(res, 200, { openapi, info, servers: [{ url: ctx.origin }], ...rest }, headers)
}
