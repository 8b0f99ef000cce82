/**
 * The utility REST API of spec/utility-api.md: the offered rows of the catalog registry
 * (catalog/registry.ts, the one place their paths are named), as route tables.
 */
import type { Route } from './adapter.js'
import { catalog, isOffered } from '../catalog/registry.js'

const offered = catalog.filter(isOffered)

/** Mounted at /api. */
export const utilityRoutes: Route[] = offered
  .filter((operation) => operation.path.startsWith('/api/'))
  .map(({ method, path, handle }) => ({ method, path: path.slice('/api'.length), handle }))

/** Catalog operations outside /api (`/docs`, `/metrics`), mounted at the root after every other path. */
export const rootRoutes: Route[] = offered.filter((operation) => !operation.path.startsWith('/api/')).map(({ method, path, handle }) => ({ method, path, handle }))

/** Every offered operation's method and full path: what the call statistics count (GET /api/stats). */
export const catalogOperations = offered.map(({ method, path }) => ({ method, path }))
