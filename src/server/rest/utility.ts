/**
 * The utility REST API of spec/utility-api.md, mounted at /api. The one place that lists its paths.
 */
import type { Route } from './adapter.js'

export const utilityRoutes: Route[] = []
