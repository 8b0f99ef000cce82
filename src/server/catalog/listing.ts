/**
 * What `GET /api/list` answers, as a pure function of the registry's rows, the environment and
 * whether the chat gateway is configured: the server's handler and `plaza util list` (embedded)
 * both call it, so the two cannot disagree.
 */
import { NOT_BUILT_YET, type CatalogEntry, type CatalogListFilter } from '../../shared/schemas/catalog.js'
import { isProviderConfigured } from '../providers/config.js'
import { isOffered } from './offered.js'
import { isOptionalPackageAvailable } from './optional-package.js'
import type { Operation } from './registry.js'

export interface CatalogState {
  /** The server's environment (`config.env`), read for `PLAZA_<NAME>_BASE_URL`. */
  env: NodeJS.ProcessEnv
  /** Whether the chat gateway has a provider (`(await services.chat()).configured`). */
  gatewayConfigured: boolean
}

/**
 * Local rows run on Plaza's own dependencies, so they are configured unless they need an optional
 * package that is not installed (a provider they can
 * also use, like PISTON for /api/execute, only widens them). A provider row needs one of its
 * providers. A gateway row needs the gateway, or, when it names a provider of its own (INFERENCE),
 * that provider, which is its upstream instead of the gateway's.
 */
function isConfigured(operation: Operation, state: CatalogState): boolean {
  const providers = operation.providers ?? []
  switch (operation.backend) {
    case 'local':
      return !operation.optionalPackage || isOptionalPackageAvailable(operation.optionalPackage, state.env)
    case 'provider':
      return providers.some((name) => isProviderConfigured(name, state.env)) && (!operation.needsGateway || state.gatewayConfigured)
    case 'gateway':
      return providers.length ? providers.some((name) => isProviderConfigured(name, state.env)) : state.gatewayConfigured
  }
}

function describeOperation(operation: Operation, state: CatalogState): CatalogEntry {
  const offered = isOffered(operation)
  const reason = offered ? undefined : (operation.notOffered ?? NOT_BUILT_YET)
  const configured = isConfigured(operation, state)
  const missing = !configured && operation.optionalPackage ? `optional package not installed: npm install ${operation.optionalPackage.name}` : undefined
  return {
    group: operation.group,
    method: operation.method,
    path: operation.path,
    summary: operation.summary,
    offered,
    backend: operation.backend,
    configured,
    ...(reason ? { reason } : {}),
    ...(missing ? { missing } : {}),
  }
}

/** Every row the filter keeps, in registry order. */
export function listOperations(rows: readonly Operation[], state: CatalogState, filter: CatalogListFilter = {}): CatalogEntry[] {
  return rows
    .filter((operation) => filter.group === undefined || operation.group === filter.group)
    .map((operation) => describeOperation(operation, state))
    .filter((entry) => filter.offered === undefined || entry.offered === filter.offered)
}

/** The answer's one-line summary: how many operations are listed and how many of them are offered. */
export function describeListing(entries: readonly CatalogEntry[]): string {
  const offered = entries.filter((entry) => entry.offered).length
  return `${entries.length} operation${entries.length === 1 ? '' : 's'}, ${offered} offered`
}
