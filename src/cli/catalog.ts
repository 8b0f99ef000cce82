/**
 * `plaza util list`: the catalog from a server's `GET /api/list`, or, embedded, from this build's
 * registry with this environment's configuration (the same pure listing the server answers with).
 */
import type { CatalogListAnswer, CatalogListFilter, CatalogListInput } from '../shared/schemas/catalog.js'
import { reach, UsageError, type Target } from './client.js'

/** The filters as the API reads them; a bad one is a usage error (exit 2) before anything is asked. */
export async function parseCatalogFilter(input: CatalogListInput): Promise<CatalogListFilter> {
  const { catalogListInput } = await import('../shared/schemas/catalog.js')
  const parsed = catalogListInput.safeParse(input)
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '))
  return parsed.data
}

export function fetchCatalog(target: Target, filter: CatalogListFilter): Promise<CatalogListAnswer> {
  return target.kind === 'remote' ? fetchRemote(target.url, filter) : listEmbedded(filter)
}

async function fetchRemote(url: string, filter: CatalogListFilter): Promise<CatalogListAnswer> {
  const query = new URLSearchParams()
  if (filter.group !== undefined) query.set('group', filter.group)
  if (filter.offered !== undefined) query.set('offered', String(filter.offered))
  const address = `${url}/api/list${query.size ? `?${query}` : ''}`
  const response = await reach(url, address, { headers: { accept: 'application/json' } })
  const body = (response.headers.get('content-type') ?? '').includes('json') ? ((await response.json().catch(() => null)) as Partial<CatalogListAnswer> | null) : null
  if (!response.ok) throw new Error(body?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`)
  if (!Array.isArray(body?.operations)) throw new Error(`unexpected answer from ${url}: is it a Plaza server with the catalog?`)
  return body as CatalogListAnswer
}

async function listEmbedded(filter: CatalogListFilter): Promise<CatalogListAnswer> {
  const [{ catalog }, { describeListing, listOperations }] = await Promise.all([import('../server/catalog/registry.js'), import('../server/catalog/listing.js')])
  const operations = listOperations(catalog, { env: process.env, gatewayConfigured: await isChatConfigured(process.env) }, filter)
  return { message: describeListing(operations), operations }
}

/** As the server's gateway reads it; an invalid chat configuration serves nothing, so it counts as not configured. */
async function isChatConfigured(env: NodeJS.ProcessEnv): Promise<boolean> {
  const [{ loadChatConfig }, { ConfigError }] = await Promise.all([import('../server/chat/config.js'), import('../server/config.js')])
  try {
    return loadChatConfig(env) !== null
  } catch (error) {
    if (error instanceof ConfigError) return false
    throw error
  }
}
