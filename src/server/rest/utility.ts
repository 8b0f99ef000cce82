/**
 * The utility REST API of spec/utility-api.md: the offered rows of the catalog registry
 * (catalog/registry.ts, the one place their paths are named), as route tables.
 */
import type { HandlerRoute, Route } from './adapter.js'
import { catalog, isOffered, type Operation } from '../catalog/registry.js'
import { errorCases } from '../errors.js'
import { PROVIDER_ERRORS } from '../providers/errors.js'

const offered = catalog.filter(isOffered)

/** A row as a route at `path`, carrying what the OpenAPI document reads: summary, input schema, answer kind, group, token and errors. */
const toRoute = (operation: Operation & { handle: HandlerRoute['handle'] }, path: string): HandlerRoute => ({
  method: operation.method!,
  path,
  handle: operation.handle,
  summary: operation.summary,
  request: operation.input,
  multipart: operation.multipart,
  answers: operation.answers,
  tag: operation.group,
  auth: operation.auth ?? (operation.backend === 'gateway' ? 'gateway-key' : undefined),
  errors: errorCases(operation.providers?.length ? PROVIDER_ERRORS : undefined, operation.errors),
  cost: operation.cost,
})

/** Mounted at /api. */
export const utilityRoutes: Route[] = offered
  .filter((operation) => operation.path.startsWith('/api/'))
  .map((operation) => toRoute(operation, operation.path.slice('/api'.length)))

/** Catalog operations outside /api (`/docs`, `/metrics`), mounted at the root after every other path. */
export const rootRoutes: Route[] = offered.filter((operation) => !operation.path.startsWith('/api/')).map((operation) => toRoute(operation, operation.path))

/** Every offered operation's method and full path: what the call statistics count (GET /api/stats). */
export const catalogOperations = offered.map(({ method, path }) => ({ method, path }))
