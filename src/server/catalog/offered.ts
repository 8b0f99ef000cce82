/**
 * Which registry rows this build serves. Its own module so that what reads the registry's rows
 * (the list, the route tables) can tell without importing the registry, whose rows import them.
 */
import type { Method } from '../rest/adapter.js'
import type { Operation } from './registry.js'

/** Whether a row is served by this build. */
export const isOffered = (operation: Operation): operation is Operation & { method: Method; path: string; handle: NonNullable<Operation['handle']> } =>
  operation.handle !== undefined && operation.method !== null && operation.path !== null
